package recall_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
)

// The real Claude Code with loom's recall as its UserPromptSubmit hook:
// what a past session of the project decided reaches the model's
// request (the fake server's log), within the token bound, once recall
// is enabled for the project; before, nothing is added.
func TestRecallHookClaudeCode(t *testing.T) {
	clitest.RealAgentsOnce(t)
	claude := clitest.NewHookedClaude(t, map[string]string{"UserPromptSubmit": "recall --hook claude-code"}, "LOOM_RECALL_HOOK_TIME=1m")
	fx, dir, srv := claude.Fx, claude.Dir, claude.Srv
	past := seedRecallDecision(t, fx, dir)
	// The first hook starts a warm recall, which answers the hooks
	// after it; stopped before the test's directories are removed.
	sock, _ := warmSocket(t, fx)

	// What the model was sent: every request's body, once the prompt
	// turn is done.
	sent := func(prompt string) string {
		t.Helper()
		before := len(srv.Requests())
		claude.Ask(t, prompt)
		var b strings.Builder
		for _, r := range srv.Requests()[before:] {
			b.Write(r.Raw)
		}
		return b.String()
	}
	checkRecallHook(t, fx, dir, past, sent)
	if recall.Holder(sock) == 0 {
		t.Error("the hooks started no warm recall")
	}
}

// recallDecision is what a past session decided, which a recall hook
// must hand the agent.
const recallDecision = "Decided: pgxpool max_conns 32 with a 5s statement_timeout"

// seedRecallDecision stores a past session of dir's project that holds
// recallDecision.
func seedRecallDecision(t *testing.T, fx *clitest.Fixture, dir string) *loom.Session {
	t.Helper()
	proj, err := paths.DetectProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := fx.OpenStore(t)
	defer st.Close()
	past := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:past", Project: proj, Cwd: dir, Title: "Connection pool exhausted"}
	if err := st.Append(context.Background(), past, clitest.TextMsg(loom.RoleUser, "the postgres connection pool is exhausted under load", fx.Now()),
		clitest.TextMsg(loom.RoleAssistant, recallDecision, fx.Now())); err != nil {
		t.Fatal(err)
	}
	return past
}

// checkRecallHook sends a prompt about past's decision through an agent
// whose recall hook is installed (sent returns the bodies of the model
// requests it made): before `loom recall enable` in dir nothing is added;
// after it, the decision and past's id reach the model, within the bound.
func checkRecallHook(t *testing.T, fx *clitest.Fixture, dir string, past *loom.Session, sent func(prompt string) string) {
	t.Helper()
	const prompt = "why is the postgres connection pool exhausted again?"
	if body := sent(prompt); strings.Contains(body, "pgxpool") {
		t.Fatal("recall added context in a project where it is not enabled")
	}
	cmd := exec.Command(clitest.LoomBinary(t), "recall", "enable")
	cmd.Dir, cmd.Env = dir, fx.BinEnv()
	if r := clitest.ExecCmd(t, cmd, ""); r.Code != 0 {
		t.Fatalf("recall enable: exit %d, %s", r.Code, r.Stderr)
	}
	body := sent(prompt)
	if !strings.Contains(body, "pgxpool max_conns 32") || !strings.Contains(body, past.ID) {
		t.Fatalf("the model's request does not hold the recalled decision:\n%.3000s", body)
	}
	checkRecalled(t, body)
}

// checkRecalled checks the context recall hooks added to the model's
// requests (body): each block within the bound, one holding the decision.
func checkRecalled(t *testing.T, body string) {
	t.Helper()
	// Each block of context a hook added (SessionStart's lists the latest
	// sessions, BeforeAgent's answers the prompt) runs from recall's header
	// to the end of the JSON string that holds it, within the bound.
	var found bool
	for rest := body; ; {
		i := strings.Index(rest, "Past sessions in this project")
		if i < 0 {
			break
		}
		end := i
		for end < len(rest) && (rest[end] != '"' || rest[end-1] == '\\') {
			end++
		}
		var text string
		if err := json.Unmarshal([]byte(`"`+rest[i:end]+`"`), &text); err != nil {
			t.Fatalf("recalled context %q: %v", rest[i:end], err)
		}
		text, _, _ = strings.Cut(text, "</hook_context>")
		if n := recall.Estimate(text); n > recall.DefaultTokens {
			t.Fatalf("recalled context of %d tokens (bound %d):\n%s", n, recall.DefaultTokens, text)
		}
		found = found || strings.Contains(text, recallDecision)
		rest = rest[end:]
	}
	if !found {
		t.Fatalf("no recalled context holds the decision:\n%.3000s", body)
	}
}
