package session_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom/cli/session"
	"github.com/loomhq/loom/internal/testkit/clitest"
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
	if !strings.Contains(claude, filepath.Join("~", ".claude", "projects")) || strings.Contains(claude, "not found") || !strings.Contains(codex, "not found") {
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
	if g := rows["gptme"]; !strings.Contains(g, filepath.Join("~", ".local", "share", "gptme", "logs")) || !strings.Contains(g, " 1 ") || !strings.Contains(rows["roo-code"], "not found") {
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

// --from list counts the sessions inside a database (opencode's and
// Kilo's hold four each here, written by opencode 1.18.33), not the
// file, and its table fits 80 columns, its header over its columns, on a
// terminal 80 wide and through a pipe alike.
func TestImportFromListCountsDatabasesAndFits(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	db, err := os.ReadFile(filepath.Join("..", "..", "importer", "opencode", "testdata", "real-1.18.33.db"))
	if err != nil {
		t.Fatal(err)
	}
	share := filepath.Join(fx.Home, ".local", "share")
	clitest.MustWrite(t, filepath.Join(share, "opencode", "opencode.db"), string(db))
	clitest.MustWrite(t, filepath.Join(share, "kilo", "kilo.db"), string(db))
	clitest.CopyTree(t, filepath.Join(clitest.Samples, "claude-code"), filepath.Join(fx.Home, ".claude", "projects"))
	for _, a := range clitest.DecodeJSON[[]session.AgentFound](t, fx.MustExec(t, "session", "import", "--from", "list", "--json")) {
		if (a.Agent == "opencode" || a.Agent == "kilo") && a.Sessions != 4 {
			t.Errorf("%s: %d sessions, want the database's 4", a.Agent, a.Sessions)
		}
	}
	checkTable := func(how, out string) {
		t.Helper()
		lines := clitest.Lines(out)
		if len(lines) < 30 || !strings.HasPrefix(lines[0], "AGENT ") {
			t.Fatalf("%s: the list:\n%s", how, out)
		}
		countEnd := strings.Index(lines[0], "SESSIONS") + len("SESSIONS")
		whereAt := strings.Index(lines[0], "WHERE")
		rows := map[string]string{}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > 80 {
				t.Errorf("%s: %d columns: %q", how, w, l)
			}
			rows[strings.Fields(l)[0]] = l
			if len(l) < whereAt || l[countEnd-1] == ' ' || l[countEnd] != ' ' || l[whereAt-1] != ' ' || l[whereAt] == ' ' {
				t.Errorf("%s: not under the header's columns:\n%s\n%s", how, lines[0], l)
			}
		}
		for _, a := range []string{"opencode", "kilo"} {
			if f := strings.Fields(rows[a]); len(f) < 3 || f[1] != "4" || !strings.HasPrefix(f[2], "~") {
				t.Errorf("%s: %s's row %q: want 4 sessions at ~/…", how, a, rows[a])
			}
		}
	}
	r := fx.Exec(t, "", "session", "import", "--from", "list")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	checkTable("piped", r.Stdout)
	p := fx.StartPTYSize(t, 80, 60, "session", "import", "--from", "list")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("on a terminal: exit %d:\n%s", code, p.Output())
	}
	var table []string
	for _, l := range clitest.Lines(strings.ReplaceAll(p.Output(), "\r", "")) {
		if !strings.Contains(l, " agents found") {
			table = append(table, l)
		}
	}
	checkTable("on a terminal", strings.Join(table, "\n"))
}

// A directory two agents share (~/.codex/sessions is the Codex CLI's and
// Open Codex's) finds an agent there only by files of its own: Codex's
// rollout does not make Open Codex found, in --from list or in capture
// status, and an Open Codex document beside it does.
func TestImportFromListSharedDirectory(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	sessions := filepath.Join(fx.Home, ".codex", "sessions")
	b, err := os.ReadFile(filepath.Join(clitest.Samples, "codex", "vibecodingtracker-codex.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	clitest.MustWrite(t, filepath.Join(sessions, "2025", "09", "19", "rollout-2025-09-19T09-02-12-01996135-afde-7911-97f0-d863511eca56.jsonl"), string(b))
	found := func() map[string]session.AgentFound {
		t.Helper()
		m := map[string]session.AgentFound{}
		for _, a := range clitest.DecodeJSON[[]session.AgentFound](t, fx.MustExec(t, "session", "import", "--from", "list", "--json")) {
			m[a.Agent] = a
		}
		return m
	}
	captured := func() map[string]bool {
		t.Helper()
		var st struct{ Agents []struct{ Agent string } }
		if err := json.Unmarshal([]byte(fx.MustExec(t, "capture", "status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, a := range st.Agents {
			m[a.Agent] = true
		}
		return m
	}
	m := found()
	if !m["codex"].Found || m["codex"].Sessions != 1 || m["open-codex"].Found {
		t.Errorf("a Codex rollout alone: codex %+v, open-codex %+v", m["codex"], m["open-codex"])
	}
	if c := captured(); !c["codex"] || c["open-codex"] {
		t.Errorf("capture status with a Codex rollout alone lists %v", c)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "importer", "opencodex", "testdata", "real", "rollout-2026-11-27-0a86b004-88c3-40c9-8bda-06b4e856fc21.json"))
	if err != nil {
		t.Fatal(err)
	}
	clitest.MustWrite(t, filepath.Join(sessions, "rollout-2026-11-27-0a86b004-88c3-40c9-8bda-06b4e856fc21.json"), string(doc))
	m = found()
	if !m["codex"].Found || !m["open-codex"].Found || m["open-codex"].Sessions != 1 {
		t.Errorf("with an Open Codex document too: codex %+v, open-codex %+v", m["codex"], m["open-codex"])
	}
	if c := captured(); !c["codex"] || !c["open-codex"] {
		t.Errorf("capture status with both lists %v", c)
	}
}

// The agents read from agentsview's material are listed, and Kiro
// CLI's database, where Kiro keeps it, is found by --from list and
// imported by --from kiro-cli (it was read only when named with --from
// amazon-q).
func TestImportFromListNamesKiroCLIAndTheOthers(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	clitest.CopyTree(t, filepath.Join("..", "..", "importer", "amazonq", "testdata"), filepath.Join(fx.Home, ".local", "share", "kiro-cli"))
	out := fx.MustExec(t, "session", "import", "--from", "list")
	rows := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		rows[strings.Fields(l)[0]] = l
	}
	for _, a := range []string{"kiro-cli", "kiro-ide", "trae", "piebald", "posit-assistant", "poolside", "icodemate"} {
		if rows[a] == "" {
			t.Errorf("no row for %s:\n%s", a, out)
		}
	}
	if k := rows["kiro-cli"]; !strings.Contains(k, filepath.Join("~", ".local", "share", "kiro-cli")) || !strings.Contains(k, " 2 ") {
		t.Errorf("kiro-cli's row %q", k)
	}
	if out := fx.MustExec(t, "session", "import", "--from", "kiro-cli"); !strings.Contains(out, "2 new") {
		t.Errorf("--from kiro-cli:\n%s", out)
	}
}
