package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom/recall"
)

// loom recall prints the project's turns about a prompt with their
// sessions, within its tokens; as an agent's hook it adds them in the
// hook's JSON only where recall was enabled, within its time bound, and
// never fails the agent's prompt.
func TestRecall(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	if out := fx.mustExec(t, "recall", "why does TestRetry flake"); !strings.Contains(out, fx.main.ID) || strings.Contains(out, fx.web.ID) {
		t.Fatalf("recall:\n%s", out)
	}
	r := fx.exec(t, "", "recall", "--json", "--tokens", "60", "TestRetry flake")
	var res recall.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 || res.Tokens > 60 || len(res.Turns) == 0 || res.Turns[0].SessionID == "" || res.Turns[0].Date.IsZero() {
		t.Fatalf("recall --json: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}

	in := `{"session_id":"x","cwd":"` + fx.project + `","hook_event_name":"UserPromptSubmit","prompt":"why does TestRetry flake?"}`
	fx.extraEnv = []string{"LOOM_RECALL_HOOK_TIME=1m"}
	hook := func(stdin string) result {
		t.Helper()
		r := fx.exec(t, stdin, "recall", "--hook", "claude-code")
		if r.code != 0 {
			t.Fatalf("hook: exit %d, %s", r.code, r.stderr)
		}
		return r
	}
	if r := hook(in); r.stdout != "" || r.stderr != "" {
		t.Fatalf("hook in a project not enabled: %q %q", r.stdout, r.stderr)
	}
	fx.mustExec(t, "recall", "enable")
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	r = hook(in)
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.HookSpecificOutput.HookEventName != "UserPromptSubmit" ||
		!strings.Contains(out.HookSpecificOutput.AdditionalContext, fx.main.ID) || recall.Estimate(out.HookSpecificOutput.AdditionalContext) > recall.DefaultTokens {
		t.Fatalf("hook: %s %s", r.stdout, r.stderr)
	}
	// A session start has no prompt: the latest sessions by title.
	r = hook(`{"cwd":"` + fx.project + `","hook_event_name":"SessionStart"}`)
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(out.HookSpecificOutput.AdditionalContext, fx.main.Title) {
		t.Fatalf("session start hook: %s %s", r.stdout, r.stderr)
	}
	// Out of time, or fed garbage: nothing, and the prompt goes on.
	fx.extraEnv = []string{"LOOM_RECALL_HOOK_TIME=1ns"}
	if r := hook(in); r.stdout != "" {
		t.Fatalf("hook out of time: %q", r.stdout)
	}
	fx.extraEnv = nil
	if r := hook("not json"); r.stdout != "" || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stderr == "" {
		t.Fatalf("hook with bad input: %q %q", r.stdout, r.stderr)
	}
	fx.mustExec(t, "recall", "disable")
	if r := hook(in); r.stdout != "" {
		t.Fatalf("hook after disable: %q", r.stdout)
	}
}
