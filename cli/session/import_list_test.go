package session_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/cli/session"
	"github.com/loomhq/loom/internal/clitest"
)

// loom session import --from list: every agent loom reads, whether it is
// on this machine, where and how many sessions it holds; as a table and
// as JSON, and refused beside anything else.
func TestImportFromList(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	clitest.CopyTree(t, filepath.Join(clitest.Samples, "claude-code"), filepath.Join(fx.Home, ".claude", "projects"))
	out := fx.MustExec(t, "session", "import", "--from", "list")
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
	if !strings.Contains(claude, filepath.Join(fx.Home, ".claude", "projects")) || strings.Contains(claude, "not found") || !strings.Contains(codex, "not found") {
		t.Fatalf("the list:\n%s", out)
	}
	agents := clitest.DecodeJSON[[]session.AgentFound](t, fx.MustExec(t, "session", "import", "--from", "list", "--json"))
	for _, a := range agents {
		if (a.Agent == "claude-code") != a.Found || (a.Found && a.Sessions == 0) {
			t.Errorf("%+v", a)
		}
	}
	for _, a := range agents {
		if a.Agent == "claude-code" && !strings.Contains(claude, " "+clitest.Itoa(a.Sessions)+" ") {
			t.Errorf("the table and the JSON count apart: %q, %d", claude, a.Sessions)
		}
	}
	// The agents read from VS Code's storage, gptme, Kimi, OpenHands,
	// Antigravity and Windsurf are listed too; gptme's log is found where gptme
	// keeps it.
	clitest.CopyTree(t, filepath.Join("..", "..", "importer", "gptme", "testdata", "logs", "2025-01-02-old-flat"), filepath.Join(fx.Home, ".local", "share", "gptme", "logs", "2025-01-02-old-flat"))
	out = fx.MustExec(t, "session", "import", "--from", "list")
	rows := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		rows[strings.Fields(l)[0]] = l
	}
	for _, a := range []string{"antigravity", "cline-vscode", "copilot-vscode", "gptme", "kilo-code-vscode", "kimi", "openhands", "roo-code", "windsurf"} {
		if rows[a] == "" {
			t.Errorf("no row for %s:\n%s", a, out)
		}
	}
	if g := rows["gptme"]; !strings.Contains(g, filepath.Join(fx.Home, ".local", "share", "gptme", "logs")) || !strings.Contains(g, " 1 ") || !strings.Contains(rows["roo-code"], "not found") {
		t.Errorf("the list:\n%s", out)
	}
	if r := fx.Exec(t, "", "session", "import", "--from", "list", "--watch"); r.Code != 2 || !strings.Contains(r.Stderr, "goes alone") {
		t.Fatalf("--from list --watch: exit %d, %s", r.Code, r.Stderr)
	}
	if r := fx.Exec(t, "", "session", "import", "--from", "nosuch"); r.Code != 2 || !strings.Contains(r.Stderr, "all, or list") {
		t.Fatalf("--from nosuch: exit %d, %s", r.Code, r.Stderr)
	}
}

// --from all reports the agents it imported from in full, and names
// those not on this machine, and those with no location of their own,
// in one line each rather than a line per agent.
func TestImportFromAllNamesTheAbsentOnce(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	clitest.CopyTree(t, filepath.Join(clitest.Samples, "claude-code"), filepath.Join(fx.Home, ".claude", "projects"))
	out := fx.MustExec(t, "session", "import", "--from", "all")
	if !strings.HasPrefix(out, "claude-code  "+filepath.Join(fx.Home, ".claude", "projects")) || strings.Contains(out, "nothing at") {
		t.Fatalf("--from all:\n%s", out)
	}
	absent, placeless := "", ""
	for _, l := range clitest.Lines(out) {
		if rest, ok := strings.CutPrefix(l, "Not on this machine: "); ok {
			absent = rest
		}
		if rest, ok := strings.CutPrefix(l, "No location of their own, name a PATH: "); ok {
			placeless = rest
		}
	}
	for _, a := range []string{"codex", "gemini", "qwen", "copilot", "cursor", "zed"} {
		if !strings.Contains(absent, a+",") && !strings.Contains(absent, a+" ") {
			t.Fatalf("%s is not named absent:\n%s", a, out)
		}
	}
	if strings.Contains(absent, "claude-code") || !strings.HasPrefix(placeless, "aider, chatgpt, claude-ai") || !strings.Contains(placeless, "windsurf") {
		t.Fatalf("--from all:\n%s", out)
	}
	// One agent named keeps its own line.
	if out := fx.MustExec(t, "session", "import", "--from", "codex"); !strings.HasPrefix(out, "codex  nothing at ") {
		t.Fatalf("--from codex:\n%s", out)
	}
}
