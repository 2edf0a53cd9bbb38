package recall_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// The real Gemini CLI with the hooks `loom hooks install --recall
// gemini` writes: once recall is enabled for the project, what a past
// session decided reaches the model's request (the fake server's log)
// within the token bound; before, nothing is added. The import hooks
// bring each prompt's session into loom as Gemini CLI ends it.
func TestRecallHookGemini(t *testing.T) {
	clitest.RealAgentsOnce(t)
	g := clitest.StartGemini(t, "", "LOOM_RECALL_HOOK_TIME=1m")
	fx, dir := g.Fx, g.Dir
	// The SessionStart hook starts a warm recall, which answers the
	// hooks after it; stopped before the test's directories are
	// removed.
	warmSocket(t, fx)
	if r := fx.Exec(t, "", "hooks", "install", "--recall", "gemini"); r.Code != 0 || !strings.Contains(r.Stdout, "BeforeAgent") {
		t.Fatalf("hooks install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	past := seedRecallDecision(t, fx, dir)

	sent := func(prompt string) string {
		t.Helper()
		before := len(g.Srv.Requests())
		g.Run("", prompt)
		var b strings.Builder
		for _, r := range g.Srv.Requests()[before:] {
			b.Write(r.Raw)
		}
		return b.String()
	}
	checkRecallHook(t, fx, dir, past, sent)
	r := fx.Exec(t, "", "session", "list", "-a", "--json")
	if r.Code != 0 || strings.Count(r.Stdout, `"gemini:`) < 2 {
		t.Errorf("the import hooks did not bring in both Gemini sessions:\n%s%s", r.Stdout, r.Stderr)
	}
}
