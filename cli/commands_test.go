package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

func TestExitCodes(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"unknown command", []string{"bogus"}, ExitUsage, `unknown command "bogus"`},
		{"unknown subcommand", []string{"session", "bogus"}, ExitUsage, `unknown command "bogus" for "loom session"`},
		{"unknown flag", []string{"session", "list", "--bogus"}, ExitUsage, "unknown flag: --bogus"},
		{"unparsable value", []string{"session", "list", "--limit", "many"}, ExitUsage, `invalid value "many" for --limit: want a whole number`},
		{"negative limit", []string{"session", "list", "--limit", "-1"}, ExitUsage, "--limit"},
		{"missing argument", []string{"session", "show"}, ExitUsage, "usage: loom session show REF"},
		{"extra argument", []string{"session", "show", "a", "b"}, ExitUsage, "too many arguments"},
		{"prune without age", []string{"session", "prune"}, ExitUsage, "--older-than is required"},
		{"prune bad age", []string{"session", "prune", "--older-than", "30x"}, ExitUsage, `unknown unit "x"`},
		{"delete without --yes off a terminal", []string{"session", "delete", fx.main.ID}, ExitUsage, "--yes is required"},
		{"bad export format", []string{"session", "export", fx.main.ID, "--format", "xml"}, ExitUsage, `unknown format "xml"`},
		{"bad role", []string{"search", "x", "--role", "robot"}, ExitUsage, `unknown role "robot"`},
		{"empty query", []string{"search", ""}, ExitUsage, "the query is empty"},
		{"blank query", []string{"search", " ", "\t"}, ExitUsage, "the query is empty"},
		{"negative speed", []string{"replay", fx.main.ID, "--speed", "-1"}, ExitUsage, "--speed"},
		{"resume without ref off a terminal", []string{"session", "resume"}, ExitUsage, "reference is required"},
		{"not found", []string{"session", "show", "nothing-like-this"}, ExitNotFound, `no session matches "nothing-like-this"`},
		{"not found id", []string{"session", "show", "ffffffff"}, ExitNotFound, "no session matches"},
		{"restore of a live session", []string{"session", "restore", fx.main.ID}, ExitNotFound, "no session in the trash"},
		{"ambiguous title", []string{"session", "show", "twin"}, ExitAmbiguous, fx.twin1.ID},
		{"other user's session", []string{"session", "show", "Bob's flaky test"}, ExitNotFound, "no session matches"},
		{"fork past the end", []string{"session", "fork", fx.main.ID, "--turn", "9"}, ExitUsage, "has 3 turns"},
		{"malformed key for run", []string{"run", "--key", "no colon", "hi"}, ExitUsage, `--key: key "no colon" must be SURFACE:NAME`},
		{"malformed key for chat", []string{"chat", "--key", "two\nlines:x"}, ExitUsage, "--key:"},
		{"two-line title", []string{"session", "rename", fx.main.ID, "a\nb"}, ExitUsage, "title must be one line"},
		{"two-line fork name", []string{"session", "fork", fx.main.ID, "--name", "a\nb"}, ExitUsage, "--name: title must be one line"},
		{"import missing file", []string{"session", "import", "/nonexistent/x.jsonl"}, ExitError, "read /nonexistent/x.jsonl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fx.run(t, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, tc.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("stderr %q does not mention %q", r.stderr, tc.want)
			}
			first := lines(r.stderr)[0]
			if !strings.HasPrefix(first, "loom: ") {
				t.Fatalf("error line %q does not start with loom:", first)
			}
			if tc.code != ExitAmbiguous && len(lines(r.stderr)) != 1 {
				t.Fatalf("error is not one line: %q", r.stderr)
			}
			if strings.Contains(r.stderr, "Usage:") || strings.Contains(r.stderr, "goroutine") {
				t.Fatalf("error dumps usage or a stack: %q", r.stderr)
			}
		})
	}
}

func TestAmbiguousListsCandidates(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	r := fx.run(t, "session", "show", "Twin")
	if r.code != ExitAmbiguous {
		t.Fatalf("exit %d", r.code)
	}
	ls := lines(r.stderr)
	if len(ls) != 3 || !strings.Contains(ls[0], `"Twin" matches 2 sessions`) {
		t.Fatalf("stderr = %q", r.stderr)
	}
	for _, s := range []*loom.Session{fx.twin1, fx.twin2} {
		if !strings.Contains(r.stderr, s.ID+"\tTwin\t"+s.Key+"\t"+fx.proj.Root+"\tupdated ") {
			t.Fatalf("candidate %s not listed with its key and project: %q", s.ID, r.stderr)
		}
	}
	if r := fx.run(t, "session", "show", "01a"); r.code != ExitNotFound || !strings.Contains(r.stderr, "an id prefix needs at least 4 characters") {
		t.Fatalf("3-character prefix: exit %d: %s", r.code, r.stderr)
	}
}

func TestExitCodeMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		code int
	}{
		{nil, ExitOK},
		{errors.New("disk full"), ExitError},
		{usageErrorf("bad"), ExitUsage},
		{fmt.Errorf("wrapped: %w", loom.NotFound("x")), ExitNotFound},
		{loom.Ambiguous("x", nil), ExitAmbiguous},
		{loom.Locked("s", &loom.Lock{PID: 1, Host: "h"}), ExitLocked},
		{loom.Errorf(loom.EINVALID, "bad import"), ExitError},
		{loom.Errorf(loom.ECONFLICT, "exists"), ExitError},
	}
	for _, tc := range tests {
		if got := ExitCode(tc.err); got != tc.code {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
	ios, _, _, errOut := term.Test()
	printError(ios, loom.Locked("0196", &loom.Lock{PID: 4242, Host: "box", Since: base}))
	if got := errOut.String(); got != "loom: session 0196 is in use by process 4242 on box since 2025-05-01T10:00:00.000Z\n" {
		t.Fatalf("locked error = %q", got)
	}
}

func TestPathsAndVersion(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	got := decodeJSON[map[string]string](t, fx.mustRun(t, "paths", "--json"))
	want := map[string]string{
		"data": filepath.Join(fx.home, "data"), "state": filepath.Join(fx.home, "state"), "config": filepath.Join(fx.home, "config"),
		"cache": filepath.Join(fx.home, "cache"), "db": fx.db, "logs": filepath.Join(fx.home, "state", "logs"),
		"memory": filepath.Join(fx.home, "data", "MEMORY.md"), "user": filepath.Join(fx.home, "data", "USER.md"),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("paths %s = %q, want %q", k, got[k], v)
		}
	}
	out := fx.mustRun(t, "paths")
	if !strings.Contains(out, "db\t"+fx.db+"\n") {
		t.Fatalf("paths:\n%s", out)
	}
	r := fx.runWith(t, runOpts{env: map[string]string{"LOOM_DB": "postgres://loom:s3cret@db.example/loom"}}, "paths")
	if strings.Contains(r.stdout, "s3cret") || !strings.Contains(r.stdout, "postgres://loom:xxxxx@db.example/loom") {
		t.Fatalf("paths shows a password:\n%s", r.stdout)
	}
	if out := fx.mustRun(t, "paths", "--db", "/elsewhere/x.db"); !strings.Contains(out, "db\t/elsewhere/x.db\n") {
		t.Fatalf("--db not shown:\n%s", out)
	}
	if out := fx.mustRun(t, "version"); !strings.HasPrefix(out, "loom 1.2.3-test (go") {
		t.Fatalf("version = %q", out)
	}
	v := decodeJSON[map[string]string](t, fx.mustRun(t, "version", "--json"))
	if v["version"] != "1.2.3-test" {
		t.Fatalf("version --json = %v", v)
	}
}

func TestHelpHasExamples(t *testing.T) {
	t.Parallel()
	root := NewRootCmd(command.NewInvocation(&Factory{IO: &term.IOStreams{}}))
	cmds := root.Commands()
	seen := 0
	for len(cmds) > 0 {
		c := cmds[0]
		cmds = append(cmds[1:], c.Commands()...)
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || slices.Contains([]string{"bash", "zsh", "fish", "powershell"}, c.Name()) {
			continue
		}
		seen++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no example", c.CommandPath())
		}
	}
	if seen < 18 {
		t.Fatalf("only %d commands", seen)
	}
	fx := newEmptyFixture(t)
	out := fx.mustRun(t, "session", "fork", "--help")
	if !strings.Contains(out, "Examples:") || !strings.Contains(out, "--turn") {
		t.Fatalf("fork --help:\n%s", out)
	}
}

func waitFor(t *testing.T, s interface{ String() string }, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q in:\n%s", want, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A panic anywhere in a command is one line on stderr, exit 1, and a
// report with the stack in the state directory, never a stack trace.
func TestPanicIsOneLine(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ios, _, out, errOut := term.Test()
	f := &Factory{
		IO:    ios,
		Env:   func(k string) string { return map[string]string{"LOOM_HOME": home}[k] },
		Getwd: func() (string, error) { return home, nil },
		OpenStore: func(ctx context.Context, url string, access Access) (loom.Store, error) {
			var m map[string]int
			m["boom"]++ // a nil map write: a runtime panic
			return nil, nil
		},
	}
	code := Main(f, []string{"session", "list"})
	if code != ExitError {
		t.Fatalf("exit %d, want %d", code, ExitError)
	}
	msg := errOut.String()
	if len(lines(msg)) != 1 || !strings.HasPrefix(msg, "loom: internal error: assignment to entry in nil map (details in ") {
		t.Fatalf("stderr %q is not one line naming the report", msg)
	}
	if out.Len() != 0 || strings.Contains(msg, "goroutine") {
		t.Fatalf("stack trace shown: %q %q", out.String(), msg)
	}
	path := strings.TrimSuffix(strings.TrimSpace(msg[strings.Index(msg, "details in ")+len("details in "):]), ")")
	report, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(path, filepath.Join(home, "state")) {
		t.Fatalf("report %s: %v", path, err)
	}
	if !strings.Contains(string(report), "goroutine") || !strings.Contains(string(report), "TestPanicIsOneLine") {
		t.Fatalf("the report has no stack:\n%s", report)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("report mode %v, want 0600", fi.Mode().Perm())
	}
}
