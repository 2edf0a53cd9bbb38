package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/cli/session"
)

// loom session import --from list: every agent loom reads, whether it is
// on this machine, where and how many sessions it holds; as a table and
// as JSON, and refused beside anything else.
func TestImportFromList(t *testing.T) {
	fx := newEmptyFixture(t)
	copyTree(t, filepath.Join(samples, "claude-code"), filepath.Join(fx.home, ".claude", "projects"))
	out := fx.mustExec(t, "session", "import", "--from", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[0], "AGENT") {
		t.Fatalf("the list:\n%s", out)
	}
	var claude, codex string
	for _, l := range lines {
		switch strings.Fields(l)[0] {
		case "claude-code":
			claude = l
		case "codex":
			codex = l
		}
	}
	if !strings.Contains(claude, filepath.Join(fx.home, ".claude", "projects")) || strings.Contains(claude, "not found") || !strings.Contains(codex, "not found") {
		t.Fatalf("the list:\n%s", out)
	}
	agents := decodeJSON[[]session.AgentFound](t, fx.mustExec(t, "session", "import", "--from", "list", "--json"))
	for _, a := range agents {
		if (a.Agent == "claude-code") != a.Found || (a.Found && a.Sessions == 0) {
			t.Errorf("%+v", a)
		}
	}
	for _, a := range agents {
		if a.Agent == "claude-code" && !strings.Contains(claude, " "+itoa(a.Sessions)+" ") {
			t.Errorf("the table and the JSON count apart: %q, %d", claude, a.Sessions)
		}
	}
	// The agents read from VS Code's storage, gptme, Kimi, OpenHands and
	// Antigravity are listed too; gptme's log is found where gptme
	// keeps it.
	copyTree(t, filepath.Join("..", "importer", "gptme", "testdata", "logs", "2025-01-02-old-flat"), filepath.Join(fx.home, ".local", "share", "gptme", "logs", "2025-01-02-old-flat"))
	out = fx.mustExec(t, "session", "import", "--from", "list")
	rows := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		rows[strings.Fields(l)[0]] = l
	}
	for _, a := range []string{"antigravity", "cline-vscode", "copilot-vscode", "gptme", "kilo-code-vscode", "kimi", "openhands", "roo-code"} {
		if rows[a] == "" {
			t.Errorf("no row for %s:\n%s", a, out)
		}
	}
	if g := rows["gptme"]; !strings.Contains(g, filepath.Join(fx.home, ".local", "share", "gptme", "logs")) || !strings.Contains(g, " 1 ") || !strings.Contains(rows["roo-code"], "not found") {
		t.Errorf("the list:\n%s", out)
	}
	if r := fx.exec(t, "", "session", "import", "--from", "list", "--watch"); r.code != 2 || !strings.Contains(r.stderr, "goes alone") {
		t.Fatalf("--from list --watch: exit %d, %s", r.code, r.stderr)
	}
	if r := fx.exec(t, "", "session", "import", "--from", "nosuch"); r.code != 2 || !strings.Contains(r.stderr, "all, or list") {
		t.Fatalf("--from nosuch: exit %d, %s", r.code, r.stderr)
	}
}
