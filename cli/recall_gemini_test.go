package cli

import (
	"strings"
	"testing"
)

// The real Gemini CLI with the hooks `loom hooks install --recall
// gemini` writes: once recall is enabled for the project, what a past
// session decided reaches the model's request (the fake server's log)
// within the token bound; before, nothing is added. The import hooks
// bring each prompt's session into loom as Gemini CLI ends it.
func TestRecallHookGemini(t *testing.T) {
	if onPostgres() {
		t.Skip("the real CLI once is enough: it runs in the SQLite pass")
	}
	t.Parallel()
	g := startGemini(t, "", "LOOM_RECALL_HOOK_TIME=1m")
	fx, dir := g.fx, g.dir
	if r := fx.exec(t, "", "hooks", "install", "--recall", "gemini"); r.code != 0 || !strings.Contains(r.stdout, "BeforeAgent") {
		t.Fatalf("hooks install: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	past := seedRecallDecision(t, fx, dir)

	sent := func(prompt string) string {
		t.Helper()
		before := len(g.srv.Requests())
		g.run("", prompt)
		var b strings.Builder
		for _, r := range g.srv.Requests()[before:] {
			b.Write(r.Raw)
		}
		return b.String()
	}
	checkRecallHook(t, fx, dir, past, sent)
	r := fx.exec(t, "", "session", "list", "-a", "--json")
	if r.code != 0 || strings.Count(r.stdout, `"gemini:`) < 2 {
		t.Errorf("the import hooks did not bring in both Gemini sessions:\n%s%s", r.stdout, r.stderr)
	}
}
