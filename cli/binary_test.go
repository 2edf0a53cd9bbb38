package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/termtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// The loom binary is built once, on first use, into binDir.
var (
	binDir  string
	binOnce sync.Once
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	if file := os.Getenv(rssWrapEnv); file != "" {
		os.Exit(runRSSWrapper(file))
	}
	dir, err := os.MkdirTemp("", "loom-cli-test-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// loomBinary builds cmd/loom once and returns its path.
func loomBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the loom binary")
	}
	binOnce.Do(func() {
		gotool, err := exec.LookPath("go")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(binDir, "loom")
		out, err := exec.Command(gotool, "build", "-o", binPath, "../cmd/loom").CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("build loom: %v", binErr)
	}
	return binPath
}

// binEnv is the environment of a loom process: only what loom reads, so
// the developer's own LOOM_* variables never leak in.
func (fx *fixture) binEnv(extra ...string) []string {
	env := []string{"LOOM_HOME=" + fx.home, "HOME=" + fx.home, "PATH=" + os.Getenv("PATH")}
	if onPostgres() {
		env = append(env, "LOOM_DB="+fx.db)
	}
	env = append(env, fx.extraEnv...)
	return append(env, extra...)
}

// exec runs the loom binary in the project directory with input, output
// and errors on pipes.
func (fx *fixture) exec(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(loomBinary(t), args...)
	cmd.Dir = fx.project
	cmd.Env = fx.binEnv()
	return execCmd(t, cmd, stdin)
}

// runCmd runs cmd with stdin on a pipe and returns its exit code and
// output. An error other than a non-zero exit (the program could not be
// started) is returned as is.
func runCmd(cmd *exec.Cmd, stdin string) (result, error) {
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code, err = ee.ExitCode(), nil
	}
	return r, err
}

// execCmd is runCmd for a program that must start.
func execCmd(t *testing.T, cmd *exec.Cmd, stdin string) result {
	t.Helper()
	r, err := runCmd(cmd, stdin)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (fx *fixture) mustExec(t *testing.T, args ...string) string {
	t.Helper()
	r := fx.exec(t, "", args...)
	if r.code != 0 {
		t.Fatalf("loom %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func TestBinaryExitCodes(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"session", "list", "--limit", "lots"}, ExitUsage, "loom: invalid value \"lots\" for --limit: want a whole number"},
		{[]string{"sessions", "frobnicate"}, ExitUsage, `loom: unknown command "frobnicate"`},
		{[]string{"session", "show"}, ExitUsage, "loom: missing arguments"},
		{[]string{"session", "delete", fx.main.ID}, ExitUsage, "loom: --yes is required"},
		{[]string{"session", "show", "no-such-session"}, ExitNotFound, `loom: no session matches "no-such-session"`},
		{[]string{"session", "export", "ffffffff"}, ExitNotFound, "loom: no session matches"},
		{[]string{"session", "show", "twin"}, ExitAmbiguous, `loom: "twin" matches 2 sessions`},
		// A PostgreSQL URL goes to the postgres engine; nothing listens on
		// port 1, so it fails, as one line.
		{[]string{"session", "list", "--db", "postgres://nobody@127.0.0.1:1/loom"}, ExitError, "loom: open postgres://nobody@127.0.0.1:1/loom: "},
	} {
		r := fx.exec(t, "", tc.args...)
		if r.code != tc.code || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("loom %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.want)
		}
	}
	r := fx.exec(t, "", "session", "show", "Twin")
	for _, s := range []*loom.Session{fx.twin1, fx.twin2} {
		if !strings.Contains(r.stderr, s.ID) {
			t.Errorf("ambiguous error does not list %s:\n%s", s.ID, r.stderr)
		}
	}
}

func TestBinarySessionCommands(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)

	// list: piped, full ids, this project only.
	rows := lines(fx.mustExec(t, "session", "list"))
	if len(rows) != 5 || !strings.HasPrefix(rows[0], fx.twin2.ID+"\tTwin\tcli:api:2\t") {
		t.Fatalf("list:\n%s", strings.Join(rows, "\n"))
	}
	list := decodeJSON[[]*loom.Session](t, fx.mustExec(t, "session", "list", "--all-projects", "--json"))
	if len(list) != 7 {
		t.Fatalf("list --json: %d sessions", len(list))
	}

	// show --json: {"session": …, "messages": […]}, the last 10.
	var shown map[string]json.RawMessage
	if err := json.Unmarshal([]byte(fx.mustExec(t, "session", "show", "Fix the flaky test", "--json")), &shown); err != nil || len(shown) != 2 {
		t.Fatalf("show --json keys: %v %v", err, shown)
	}
	var msgs []*loom.Message
	json.Unmarshal(shown["messages"], &msgs)
	if len(msgs) != 9 || msgs[8].Seq != 9 {
		t.Fatalf("show --json: %d messages", len(msgs))
	}
	if out := fx.mustExec(t, "session", "show", fx.main.ID[:8]); !strings.Contains(out, "⚙ read_file · completed · 120ms") {
		t.Fatalf("show:\n%s", out)
	}

	// search: operators are text, and hits carry ids.
	if r := fx.exec(t, "", "search", `he said "hi" AND (NEAR* -x`); r.code != 0 {
		t.Fatalf("odd query: exit %d: %s", r.code, r.stderr)
	}
	hits := decodeJSON[[]loom.SearchHit](t, fx.mustExec(t, "search", "fake clock", "--json"))
	if len(hits) == 0 || hits[0].SessionID != fx.main.ID {
		t.Fatalf("search hits = %+v", hits)
	}

	// fork, rename, move.
	id := strings.TrimSpace(fx.mustExec(t, "session", "fork", fx.main.ID, "--turn", "1", "--name", "retry again"))
	fork := decodeJSON[*loom.Session](t, fx.mustExec(t, "session", "resume", "retry again", "--json"))
	if fork.ID != id || fork.ForkTurn != 1 || fork.ParentID != fx.main.ID {
		t.Fatalf("fork = %+v", fork)
	}
	fx.mustExec(t, "session", "rename", id, "retry, third time")
	moved := decodeJSON[*loom.Session](t, fx.mustExec(t, "session", "move", "retry, third time", fx.other, "--json"))
	if moved.Project.ID != fx.otherP.ID {
		t.Fatalf("moved to %+v", moved.Project)
	}

	// delete and restore.
	fx.mustExec(t, "session", "delete", id, "--yes")
	if r := fx.exec(t, "", "session", "show", id); r.code != ExitNotFound {
		t.Fatalf("deleted session shown: %d", r.code)
	}
	fx.mustExec(t, "session", "restore", id)
	fx.mustExec(t, "session", "show", id)

	// usage.
	rep := decodeJSON[loom.UsageReport](t, fx.mustExec(t, "usage", "--json"))
	if rep.Total.InputTokens != 1200+100 { // forks do not count their copied history again
		t.Fatalf("usage total = %+v", rep.Total)
	}

	// paths and version.
	paths := decodeJSON[map[string]string](t, fx.mustExec(t, "paths", "--json"))
	if paths["db"] != fx.db || paths["logs"] != filepath.Join(fx.home, "state", "logs") {
		t.Fatalf("paths = %v", paths)
	}
	if out := fx.mustExec(t, "version"); !strings.HasPrefix(out, "loom ") {
		t.Fatalf("version = %q", out)
	}

	// prune: the fixture's sessions are from 2025, older than 30 days.
	dry := lines(fx.mustExec(t, "session", "prune", "--older-than", "30d", "--dry-run"))
	if len(dry) != 4 {
		t.Fatalf("prune --dry-run listed %d:\n%s", len(dry), strings.Join(dry, "\n"))
	}
	pruned := lines(fx.mustExec(t, "session", "prune", "--older-than", "30d", "--yes"))
	if len(pruned) != 4 || fx.mustExec(t, "session", "list") != "" {
		t.Fatalf("prune removed %d", len(pruned))
	}
}

func TestBinaryExportImport(t *testing.T) {
	t.Parallel()
	src := newFixture(t)
	first := src.mustExec(t, "session", "export", "--all")
	file := filepath.Join(t.TempDir(), "all.jsonl")
	src.mustExec(t, "session", "export", "--all", "-o", file)
	if b, _ := os.ReadFile(file); string(b) != first {
		t.Fatal("-o wrote something else than standard output")
	}
	dst := newEmptyFixture(t)
	dst.mustExec(t, "session", "import", file)
	if second := dst.mustExec(t, "session", "export", "--all"); second != first {
		t.Fatalf("binary round trip differs")
	}

	// Line 3 malformed: non-zero, names line 3, store unchanged.
	ls := lines(first)
	ls[2] = `{"type":"message","message":{"id":"x","seq":3,` // cut short
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(strings.Join(ls, "\n")+"\n"), 0o600)
	empty := newEmptyFixture(t)
	r := empty.exec(t, "", "session", "import", bad)
	if r.code == 0 || !strings.HasPrefix(r.stderr, "loom: "+bad+":3: ") {
		t.Fatalf("bad import: exit %d, %q", r.code, r.stderr)
	}
	if s, m := empty.sessionCount(t); s != 0 || m != 0 {
		t.Fatalf("bad import wrote %d sessions, %d messages", s, m)
	}
	// From standard input.
	r = empty.exec(t, first, "session", "import", "-")
	if r.code != 0 || len(lines(r.stdout)) != 7 {
		t.Fatalf("import from stdin: %+v", r)
	}
}

// startPTY runs loom in the project directory on a 120×40 terminal.
func (fx *fixture) startPTY(t *testing.T, args ...string) *termtest.Term {
	t.Helper()
	return fx.startPTYSize(t, 120, 40, args...)
}

// startPTYSize runs loom in the project directory on a cols×rows
// terminal.
func (fx *fixture) startPTYSize(t *testing.T, cols, rows int, args ...string) *termtest.Term {
	t.Helper()
	cmd := exec.Command(loomBinary(t), args...)
	cmd.Dir = fx.project
	cmd.Env = fx.binEnv("TERM=xterm-256color")
	return termtest.Start(t, cmd, cols, rows)
}

func TestPickerOnTerminal(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	srv := openaitest.NewServer()
	defer srv.Close()
	fx.extraEnv = []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_API_KEY=test"}
	p := fx.startPTY(t, "session", "resume")
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
	waitScreen(t, p, "filter: explore retry", "1 of 5 sessions")
	p.Send("\r")
	// The chosen session is resumed in chat.
	p.WaitFor(t, "resuming session "+fx.sub.ID)
	p.WaitFor(t, "›")
	p.Send("\x04") // Ctrl+D leaves the chat
	if code := p.Wait(t); code != 0 {
		t.Fatalf("picker exit %d:\n%s", code, p.Output())
	}
	if s, err := fx.openStore(t).Session(context.Background(), fx.sub.ID); err != nil || s.Title != "explore retry" {
		t.Fatalf("typing in the picker changed the session: %+v, %v", s, err)
	}

	// Esc leaves without choosing.
	p = fx.startPTY(t, "session", "resume")
	p.WaitFor(t, "Fix the flaky test")
	p.Send("\x1b")
	if code := p.Wait(t); code != ExitError || !strings.Contains(p.Output(), "no session chosen") {
		t.Fatalf("leaving the picker: exit %d\n%s", code, p.Output())
	}
}

func TestForkOnTerminal(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	p := fx.startPTY(t, "session", "fork", fx.main.ID[:8])
	p.WaitFor(t, "Fork after which turn? [1-3, enter for all]")
	for _, want := range []string{"1  Why does TestRetry flake?", "2  Use a fake clock then.", "3  thanks"} {
		if !strings.Contains(p.Output(), want) {
			t.Fatalf("turn list lacks %q:\n%s", want, p.Output())
		}
	}
	p.Send("2\n")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Output())
	}
	ls := lines(strings.ReplaceAll(p.Output(), "\r", ""))
	id := strings.TrimSpace(ls[len(ls)-1])
	fork := decodeJSON[*loom.Session](t, fx.mustExec(t, "session", "resume", id, "--json"))
	if fork.ParentID != fx.main.ID || fork.ForkTurn != 2 || fork.TurnCount != 2 {
		t.Fatalf("fork = %+v", fork)
	}
}
