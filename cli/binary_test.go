package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }

func TestBinaryExitCodes(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"session", "list", "--limit", "lots"}, cli.ExitUsage, "loom: invalid value \"lots\" for --limit: want a whole number"},
		{[]string{"sessions", "frobnicate"}, cli.ExitUsage, `loom: unknown command "frobnicate"`},
		{[]string{"session", "show"}, cli.ExitUsage, "loom: missing arguments"},
		{[]string{"session", "delete", fx.Main.ID}, cli.ExitUsage, "loom: --yes is required"},
		{[]string{"session", "show", "no-such-session"}, cli.ExitNotFound, `loom: no session matches "no-such-session"`},
		{[]string{"session", "export", "ffffffff"}, cli.ExitNotFound, "loom: no session matches"},
		{[]string{"session", "show", "twin"}, cli.ExitAmbiguous, `loom: "twin" matches 2 sessions`},
		// A PostgreSQL URL goes to the postgres engine; nothing listens on
		// port 1, so it fails, as one line.
		{[]string{"session", "list", "--db", "postgres://nobody@127.0.0.1:1/loom"}, cli.ExitError, "loom: open postgres://nobody@127.0.0.1:1/loom: "},
	} {
		r := fx.Exec(t, "", tc.args...)
		if r.Code != tc.code || !strings.HasPrefix(r.Stderr, tc.want) {
			t.Errorf("loom %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), r.Code, r.Stderr, tc.code, tc.want)
		}
	}
	r := fx.Exec(t, "", "session", "show", "Twin")
	for _, s := range []*loom.Session{fx.Twin1, fx.Twin2} {
		if !strings.Contains(r.Stderr, s.ID) {
			t.Errorf("ambiguous error does not list %s:\n%s", s.ID, r.Stderr)
		}
	}
}

func TestBinarySessionCommands(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)

	// list: piped, full ids, this project only.
	rows := clitest.Lines(fx.MustExec(t, "session", "list"))
	if len(rows) != 5 || !strings.HasPrefix(rows[0], fx.Twin2.ID+"\tTwin\tcli:api:2\t") {
		t.Fatalf("list:\n%s", strings.Join(rows, "\n"))
	}
	list := clitest.DecodeJSON[[]*loom.Session](t, fx.MustExec(t, "session", "list", "--all-projects", "--json"))
	if len(list) != 7 {
		t.Fatalf("list --json: %d sessions", len(list))
	}

	// show --json: {"session": …, "messages": […]}, the last 10.
	var shown map[string]json.RawMessage
	if err := json.Unmarshal([]byte(fx.MustExec(t, "session", "show", "Fix the flaky test", "--json")), &shown); err != nil || len(shown) != 2 {
		t.Fatalf("show --json keys: %v %v", err, shown)
	}
	var msgs []*loom.Message
	json.Unmarshal(shown["messages"], &msgs)
	if len(msgs) != 9 || msgs[8].Seq != 9 {
		t.Fatalf("show --json: %d messages", len(msgs))
	}
	if out := fx.MustExec(t, "session", "show", fx.Main.ID[:8]); !strings.Contains(out, "⚙ read_file · completed · 120ms") {
		t.Fatalf("show:\n%s", out)
	}

	// search: operators are text, and hits carry ids.
	if r := fx.Exec(t, "", "search", `he said "hi" AND (NEAR* -x`); r.Code != 0 {
		t.Fatalf("odd query: exit %d: %s", r.Code, r.Stderr)
	}
	hits := clitest.DecodeJSON[[]loom.SearchHit](t, fx.MustExec(t, "search", "fake clock", "--json"))
	if len(hits) == 0 || hits[0].SessionID != fx.Main.ID {
		t.Fatalf("search hits = %+v", hits)
	}

	// fork, rename, move.
	id := strings.TrimSpace(fx.MustExec(t, "session", "fork", fx.Main.ID, "--turn", "1", "--name", "retry again"))
	fork := clitest.DecodeJSON[*loom.Session](t, fx.MustExec(t, "session", "resume", "retry again", "--json"))
	if fork.ID != id || fork.ForkTurn != 1 || fork.ParentID != fx.Main.ID {
		t.Fatalf("fork = %+v", fork)
	}
	fx.MustExec(t, "session", "rename", id, "retry, third time")
	moved := clitest.DecodeJSON[*loom.Session](t, fx.MustExec(t, "session", "move", "retry, third time", fx.Other, "--json"))
	if moved.Project.ID != fx.OtherP.ID {
		t.Fatalf("moved to %+v", moved.Project)
	}

	// delete and restore.
	fx.MustExec(t, "session", "delete", id, "--yes")
	if r := fx.Exec(t, "", "session", "show", id); r.Code != cli.ExitNotFound {
		t.Fatalf("deleted session shown: %d", r.Code)
	}
	fx.MustExec(t, "session", "restore", id)
	fx.MustExec(t, "session", "show", id)

	// usage.
	rep := clitest.DecodeJSON[loom.UsageReport](t, fx.MustExec(t, "usage", "--json"))
	if rep.Total.InputTokens != 1200+100 { // forks do not count their copied history again
		t.Fatalf("usage total = %+v", rep.Total)
	}

	// paths and version.
	paths := clitest.DecodeJSON[map[string]string](t, fx.MustExec(t, "paths", "--json"))
	if paths["db"] != fx.DB || paths["logs"] != filepath.Join(fx.Home, "state", "logs") {
		t.Fatalf("paths = %v", paths)
	}
	if out := fx.MustExec(t, "version"); !strings.HasPrefix(out, "loom ") {
		t.Fatalf("version = %q", out)
	}

	// prune: the fixture's sessions are from 2025, older than 30 days.
	dry := clitest.Lines(fx.MustExec(t, "session", "prune", "--older-than", "30d", "--dry-run"))
	if len(dry) != 4 {
		t.Fatalf("prune --dry-run listed %d:\n%s", len(dry), strings.Join(dry, "\n"))
	}
	pruned := clitest.Lines(fx.MustExec(t, "session", "prune", "--older-than", "30d", "--yes"))
	if len(pruned) != 4 || fx.MustExec(t, "session", "list") != "" {
		t.Fatalf("prune removed %d", len(pruned))
	}
}

func TestBinaryExportImport(t *testing.T) {
	t.Parallel()
	src := clitest.NewFixture(t)
	first := src.MustExec(t, "session", "export", "--all")
	file := filepath.Join(t.TempDir(), "all.jsonl")
	src.MustExec(t, "session", "export", "--all", "-o", file)
	if b, _ := os.ReadFile(file); string(b) != first {
		t.Fatal("-o wrote something else than standard output")
	}
	dst := clitest.NewEmptyFixture(t)
	dst.MustExec(t, "session", "import", file)
	if second := dst.MustExec(t, "session", "export", "--all"); second != first {
		t.Fatalf("binary round trip differs")
	}

	// Line 3 malformed: non-zero, names line 3, store unchanged.
	ls := clitest.Lines(first)
	ls[2] = `{"type":"message","message":{"id":"x","seq":3,` // cut short
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(strings.Join(ls, "\n")+"\n"), 0o600)
	empty := clitest.NewEmptyFixture(t)
	r := empty.Exec(t, "", "session", "import", bad)
	if r.Code == 0 || !strings.HasPrefix(r.Stderr, "loom: "+bad+":3: ") {
		t.Fatalf("bad import: exit %d, %q", r.Code, r.Stderr)
	}
	if s, m := empty.SessionCount(t); s != 0 || m != 0 {
		t.Fatalf("bad import wrote %d sessions, %d messages", s, m)
	}
	// From standard input.
	r = empty.Exec(t, first, "session", "import", "-")
	if r.Code != 0 || len(clitest.Lines(r.Stdout)) != 7 {
		t.Fatalf("import from stdin: %+v", r)
	}
}

func TestPickerOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	srv := openaitest.NewServer()
	defer srv.Close()
	fx.ExtraEnv = []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_API_KEY=test"}
	p := fx.StartPTY(t, "session", "resume")
	// Every session of the project is listed.
	for _, title := range []string{"Sessions in api", "Fix the flaky test", "explore retry", "flaky test, other approach", "Twin"} {
		p.WaitFor(t, title)
	}
	if strings.Contains(p.Output(), "Deploy notes") {
		t.Fatal("the picker lists another project's session")
	}
	// Typing filters (a letter is never a command), then enter chooses
	// the best match.
	p.Send("explore retry")
	clitest.WaitScreen(t, p, "filter: explore retry", "1 of 5 sessions")
	p.Send("\r")
	// The chosen session is resumed in chat.
	p.WaitFor(t, "resuming session "+fx.Sub.ID)
	p.WaitFor(t, "›")
	p.Send("\x04") // Ctrl+D leaves the chat
	if code := p.Wait(t); code != 0 {
		t.Fatalf("picker exit %d:\n%s", code, p.Output())
	}
	if s, err := fx.OpenStore(t).Session(context.Background(), fx.Sub.ID); err != nil || s.Title != "explore retry" {
		t.Fatalf("typing in the picker changed the session: %+v, %v", s, err)
	}

	// Esc leaves without choosing.
	p = fx.StartPTY(t, "session", "resume")
	p.WaitFor(t, "Fix the flaky test")
	p.Send("\x1b")
	if code := p.Wait(t); code != cli.ExitError || !strings.Contains(p.Output(), "no session chosen") {
		t.Fatalf("leaving the picker: exit %d\n%s", code, p.Output())
	}
}

func TestForkOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	p := fx.StartTurnQuestion(t, "Fork after which turn? [1-3, enter for all]", "session", "fork", fx.Main.ID[:8])
	p.Send("2\r")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Output())
	}
	ls := clitest.Lines(strings.ReplaceAll(p.Output(), "\r", ""))
	id := strings.TrimSpace(ls[len(ls)-1])
	fork := clitest.DecodeJSON[*loom.Session](t, fx.MustExec(t, "session", "resume", id, "--json"))
	if fork.ParentID != fx.Main.ID || fork.ForkTurn != 2 || fork.TurnCount != 2 {
		t.Fatalf("fork = %+v", fork)
	}
}
