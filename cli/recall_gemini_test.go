package cli

import (
	"os/exec"
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
	const prompt = "why is the postgres connection pool exhausted again?"
	if body := sent(prompt); strings.Contains(body, "pgxpool") {
		t.Fatal("recall added context in a project where it is not enabled")
	}
	cmd := exec.Command(loomBinary(t), "recall", "enable")
	cmd.Dir, cmd.Env = dir, fx.binEnv()
	if r := execCmd(t, cmd, ""); r.code != 0 {
		t.Fatalf("recall enable: exit %d, %s", r.code, r.stderr)
	}
	body := sent(prompt)
	r := fx.exec(t, "", "session", "list", "-a", "--json")
	if r.code != 0 || strings.Count(r.stdout, `"gemini:`) < 2 {
		t.Errorf("the import hooks did not bring in both Gemini sessions:\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(body, "pgxpool max_conns 32") || !strings.Contains(body, past.ID) {
		t.Fatalf("the model's request does not hold the recalled decision:\n%.3000s", body)
	}
	checkRecalled(t, body)
}
