package recall_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/recall"
)

// loom recall prints the project's turns about a prompt with their
// sessions, within its tokens; as an agent's hook it adds them in the
// hook's JSON only where recall was enabled, within its time bound, and
// never fails the agent's prompt.
func TestRecall(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	if out := fx.MustExec(t, "recall", "why does TestRetry flake"); !strings.Contains(out, fx.Main.ID) || strings.Contains(out, fx.Web.ID) {
		t.Fatalf("recall:\n%s", out)
	}
	r := fx.Exec(t, "", "recall", "--json", "--tokens", "60", "TestRetry flake")
	var res recall.Result
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || res.Tokens > 60 || len(res.Turns) == 0 || res.Turns[0].SessionID == "" || res.Turns[0].Date.IsZero() {
		t.Fatalf("recall --json: exit %d, %s %s", r.Code, r.Stdout, r.Stderr)
	}

	in := `{"session_id":"x","cwd":"` + fx.Project + `","hook_event_name":"UserPromptSubmit","prompt":"why does TestRetry flake?"}`
	fx.ExtraEnv = []string{"LOOM_RECALL_HOOK_TIME=1m"}
	hook := func(stdin string) clitest.Result {
		t.Helper()
		r := fx.Exec(t, stdin, "recall", "--hook", "claude-code")
		if r.Code != 0 {
			t.Fatalf("hook: exit %d, %s", r.Code, r.Stderr)
		}
		return r
	}
	if r := hook(in); r.Stdout != "" || r.Stderr != "" {
		t.Fatalf("hook in a project not enabled: %q %q", r.Stdout, r.Stderr)
	}
	fx.MustExec(t, "recall", "enable")
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	r = hook(in)
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || out.HookSpecificOutput.HookEventName != "UserPromptSubmit" ||
		!strings.Contains(out.HookSpecificOutput.AdditionalContext, fx.Main.ID) || recall.Estimate(out.HookSpecificOutput.AdditionalContext) > recall.DefaultTokens {
		t.Fatalf("hook: %s %s", r.Stdout, r.Stderr)
	}
	// A session start has no prompt: the latest sessions by title.
	r = hook(`{"cwd":"` + fx.Project + `","hook_event_name":"SessionStart"}`)
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || out.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(out.HookSpecificOutput.AdditionalContext, fx.Main.Title) {
		t.Fatalf("session start hook: %s %s", r.Stdout, r.Stderr)
	}
	// Out of time, or fed garbage: nothing, and the prompt goes on.
	fx.ExtraEnv = []string{"LOOM_RECALL_HOOK_TIME=1ns"}
	if r := hook(in); r.Stdout != "" {
		t.Fatalf("hook out of time: %q", r.Stdout)
	}
	// Bad input is told on stderr, when the hook has the time to read it
	// (on a busy machine the default budget can end first, silently).
	fx.ExtraEnv = []string{"LOOM_RECALL_HOOK_TIME=1m"}
	if r := hook("not json"); r.Stdout != "" || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || r.Stderr == "" {
		t.Fatalf("hook with bad input: %q %q", r.Stdout, r.Stderr)
	}
	fx.ExtraEnv = nil
	fx.MustExec(t, "recall", "disable")
	if r := hook(in); r.Stdout != "" {
		t.Fatalf("hook after disable: %q", r.Stdout)
	}
}

// In a directory that is no project of the user's sessions, loom recall
// recalls from every project and says so in one line, instead of an
// empty answer with no hint.
func TestRecallOutsideAnyProject(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Dir: t.TempDir()}, "recall", "--json", "TestRetry flake")
	var res recall.Result
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || !res.Everywhere || len(res.Turns) == 0 ||
		len(clitest.Lines(r.Stderr)) != 1 || !strings.Contains(r.Stderr, "recalled from every project") {
		t.Fatalf("recall outside a project: exit %d, %s %q", r.Code, r.Stdout, r.Stderr)
	}
	if out := fx.MustExec(t, "recall", "TestRetry flake"); strings.Contains(out, "every project") {
		t.Fatalf("recall in the project said every project:\n%s", out)
	}
}

// loom recall says the scope it recalled from: -a heads its turns as
// every project's and says "scope": "every_project" in --json, a recall
// in the project "scope": "project"; and a recall that finds nothing
// says so on stderr, leaving stdout empty, as loom search does.
func TestRecallSaysItsScope(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	scope := func(args ...string) recall.Result {
		t.Helper()
		r := fx.Exec(t, "", append([]string{"recall", "--json"}, args...)...)
		var res recall.Result
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 {
			t.Fatalf("recall --json %v: exit %d, %s %s", args, r.Code, r.Stdout, r.Stderr)
		}
		return res
	}
	if res := scope("-a", "TestRetry flake"); res.Scope != "every_project" || len(res.Turns) == 0 {
		t.Errorf("recall -a: scope %q, %d turns; want every_project", res.Scope, len(res.Turns))
	}
	if res := scope("TestRetry flake"); res.Scope != "project" {
		t.Errorf("recall in the project: scope %q, want project", res.Scope)
	}
	if out := fx.MustExec(t, "recall", "-a", "TestRetry flake"); strings.Contains(out, "in this project") || !strings.Contains(out, "every project") {
		t.Errorf("recall -a heads its turns as this project's:\n%s", out)
	}
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "recall", "zebra quokka marmalade")
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "bears on") || !strings.Contains(r.Stderr, "-a") {
		t.Errorf("recall of nothing on a terminal: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = fx.RunWith(t, clitest.RunOpts{Tty: true}, "recall", "-a", "zebra quokka marmalade")
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "bears on") || strings.Contains(r.Stderr, "-a") {
		t.Errorf("recall -a of nothing on a terminal: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// On a machine too busy for the hook's budget, the hook gives the agent
// nothing; it is counted, with the hooks that answered, and loom doctor
// says how many ran out of time and what gives them more.
func TestRecallHookOutOfTimeCounted(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	fx.MustExec(t, "recall", "enable")
	in := `{"session_id":"x","cwd":"` + fx.Project + `","hook_event_name":"UserPromptSubmit","prompt":"why does TestRetry flake?"}`
	hook := func(budget string) clitest.Result {
		t.Helper()
		fx.ExtraEnv = []string{"LOOM_RECALL_HOOK_TIME=" + budget}
		defer func() { fx.ExtraEnv = nil }()
		r := fx.Exec(t, in, "recall", "--hook", "claude-code")
		if r.Code != 0 {
			t.Fatalf("hook: exit %d, %s", r.Code, r.Stderr)
		}
		return r
	}
	if r := hook("1m"); r.Stdout == "" {
		t.Fatalf("hook with a minute gave nothing: %s", r.Stderr)
	}
	if out := fx.MustExec(t, "doctor"); strings.Contains(out, "Recall hooks") {
		t.Fatalf("doctor with no hook out of time:\n%s", out)
	}
	for range 2 {
		if r := hook("1ns"); r.Stdout != "" {
			t.Fatalf("hook out of time: %q", r.Stdout)
		}
	}
	out := fx.MustExec(t, "doctor")
	if !strings.Contains(out, "2 of 3 ran out of time") || !strings.Contains(out, "hook_time") {
		t.Fatalf("doctor after hooks ran out of time:\n%s", out)
	}
	var rep struct {
		RecallHooks struct{ Answered, Late int } `json:"recall_hooks"`
	}
	if err := json.Unmarshal([]byte(fx.MustExec(t, "doctor", "--json")), &rep); err != nil || rep.RecallHooks.Answered != 1 || rep.RecallHooks.Late != 2 {
		t.Fatalf("doctor --json: %+v, %v", rep, err)
	}
}
