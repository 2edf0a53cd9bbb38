package cli_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/sessionstore"
)

func TestExitCodes(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"unknown command", []string{"bogus"}, cli.ExitUsage, `unknown command "bogus"`},
		{"unknown subcommand", []string{"session", "bogus"}, cli.ExitUsage, `unknown command "bogus" for "loom session"`},
		{"unknown flag", []string{"session", "list", "--bogus"}, cli.ExitUsage, "unknown flag: --bogus"},
		{"unparsable value", []string{"session", "list", "--limit", "many"}, cli.ExitUsage, `invalid value "many" for --limit: want a whole number`},
		{"negative limit", []string{"session", "list", "--limit", "-1"}, cli.ExitUsage, "--limit"},
		{"missing argument", []string{"session", "show"}, cli.ExitUsage, "usage: loom session show REF"},
		{"extra argument", []string{"session", "show", "a", "b"}, cli.ExitUsage, "too many arguments"},
		{"prune without age", []string{"session", "prune"}, cli.ExitUsage, "--older-than is required"},
		{"prune bad age", []string{"session", "prune", "--older-than", "30x"}, cli.ExitUsage, `unknown unit "x"`},
		{"delete without --yes off a terminal", []string{"session", "delete", fx.Main.ID}, cli.ExitUsage, "--yes is required"},
		{"bad export format", []string{"session", "export", fx.Main.ID, "--format", "xml"}, cli.ExitUsage, `unknown format "xml"`},
		{"bad role", []string{"search", "x", "--role", "robot"}, cli.ExitUsage, `unknown role "robot"`},
		{"empty query", []string{"search", ""}, cli.ExitUsage, "the query is empty"},
		{"blank query", []string{"search", " ", "\t"}, cli.ExitUsage, "the query is empty"},
		{"negative speed", []string{"replay", fx.Main.ID, "--speed", "-1"}, cli.ExitUsage, "--speed"},
		{"resume without ref off a terminal", []string{"session", "resume"}, cli.ExitUsage, "reference is required"},
		{"not found", []string{"session", "show", "nothing-like-this"}, cli.ExitNotFound, `no session matches "nothing-like-this"`},
		{"not found id", []string{"session", "show", "ffffffff"}, cli.ExitNotFound, "no session matches"},
		{"restore of a live session", []string{"session", "restore", fx.Main.ID}, cli.ExitNotFound, "no session in the trash"},
		{"ambiguous title", []string{"session", "show", "twin"}, cli.ExitAmbiguous, fx.Twin1.ID},
		{"other user's session", []string{"session", "show", "Bob's flaky test"}, cli.ExitNotFound, "no session matches"},
		{"fork past the end", []string{"session", "fork", fx.Main.ID, "--turn", "9"}, cli.ExitUsage, "has 3 turns"},
		{"malformed key for run", []string{"run", "--key", "no colon", "hi"}, cli.ExitUsage, `--key: key "no colon" must be SURFACE:NAME`},
		{"malformed key for chat", []string{"chat", "--key", "two\nlines:x"}, cli.ExitUsage, "--key:"},
		{"two-line title", []string{"session", "rename", fx.Main.ID, "a\nb"}, cli.ExitUsage, "title must be one line"},
		{"two-line fork name", []string{"session", "fork", fx.Main.ID, "--name", "a\nb"}, cli.ExitUsage, "--name: title must be one line"},
		{"import missing file", []string{"session", "import", "/nonexistent/x.jsonl"}, cli.ExitError, "read /nonexistent/x.jsonl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fx.Run(t, tc.args...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.Code, tc.code, r.Stderr)
			}
			if !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("stderr %q does not mention %q", r.Stderr, tc.want)
			}
			first := clitest.Lines(r.Stderr)[0]
			if !strings.HasPrefix(first, "loom: ") {
				t.Fatalf("error line %q does not start with loom:", first)
			}
			if tc.code != cli.ExitAmbiguous && len(clitest.Lines(r.Stderr)) != 1 {
				t.Fatalf("error is not one line: %q", r.Stderr)
			}
			if strings.Contains(r.Stderr, "Usage:") || strings.Contains(r.Stderr, "goroutine") {
				t.Fatalf("error dumps usage or a stack: %q", r.Stderr)
			}
		})
	}
}

func TestAmbiguousListsCandidates(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.Run(t, "session", "show", "Twin")
	if r.Code != cli.ExitAmbiguous {
		t.Fatalf("exit %d", r.Code)
	}
	ls := clitest.Lines(r.Stderr)
	if len(ls) != 3 || !strings.Contains(ls[0], `"Twin" matches 2 sessions`) {
		t.Fatalf("stderr = %q", r.Stderr)
	}
	for _, s := range []*loom.Session{fx.Twin1, fx.Twin2} {
		if !strings.Contains(r.Stderr, s.ID+"\tTwin\t"+s.Key+"\t"+fx.Proj.Root+"\tupdated ") {
			t.Fatalf("candidate %s not listed with its key and project: %q", s.ID, r.Stderr)
		}
	}
	if r := fx.Run(t, "session", "show", "01a"); r.Code != cli.ExitNotFound || !strings.Contains(r.Stderr, "an id prefix needs at least 4 characters") {
		t.Fatalf("3-character prefix: exit %d: %s", r.Code, r.Stderr)
	}
}

func TestExitCodeMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		code int
	}{
		{nil, cli.ExitOK},
		{errors.New("disk full"), cli.ExitError},
		{clitest.UsageErrorf("bad"), cli.ExitUsage},
		{fmt.Errorf("wrapped: %w", loom.NotFound("x")), cli.ExitNotFound},
		{loom.Ambiguous("x", nil), cli.ExitAmbiguous},
		{loom.Locked("s", &loom.Lock{PID: 1, Host: "h"}), cli.ExitLocked},
		{loom.Errorf(loom.EINVALID, "bad import"), cli.ExitError},
		{loom.Errorf(loom.ECONFLICT, "exists"), cli.ExitError},
	}
	for _, tc := range tests {
		if got := cli.ExitCode(tc.err); got != tc.code {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
	ios, _, _, errOut := term.Test()
	cli.PrintError(ios, loom.Locked("0196", &loom.Lock{PID: 4242, Host: "box", Since: clitest.Base}))
	if got := errOut.String(); got != "loom: session 0196 is in use by process 4242 on box since 2025-05-01T10:00:00.000Z\n" {
		t.Fatalf("locked error = %q", got)
	}
}

func TestPathsAndVersion(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	got := clitest.DecodeJSON[map[string]string](t, fx.MustRun(t, "paths", "--json"))
	want := map[string]string{
		"data": filepath.Join(fx.Home, "data"), "state": filepath.Join(fx.Home, "state"), "config": filepath.Join(fx.Home, "config"),
		"cache": filepath.Join(fx.Home, "cache"), "db": fx.DB, "logs": filepath.Join(fx.Home, "state", "logs"),
		"memory": filepath.Join(fx.Home, "data", "MEMORY.md"), "user": filepath.Join(fx.Home, "data", "USER.md"),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("paths %s = %q, want %q", k, got[k], v)
		}
	}
	out := fx.MustRun(t, "paths")
	if !strings.Contains(out, "db\t"+fx.DB+"\n") {
		t.Fatalf("paths:\n%s", out)
	}
	r := fx.RunWith(t, clitest.RunOpts{Env: map[string]string{"LOOM_DB": "postgres://loom:s3cret@db.example/loom"}}, "paths")
	if strings.Contains(r.Stdout, "s3cret") || !strings.Contains(r.Stdout, "postgres://loom:xxxxx@db.example/loom") {
		t.Fatalf("paths shows a password:\n%s", r.Stdout)
	}
	if out := fx.MustRun(t, "paths", "--db", "/elsewhere/x.db"); !strings.Contains(out, "db\t/elsewhere/x.db\n") {
		t.Fatalf("--db not shown:\n%s", out)
	}
	if out := fx.MustRun(t, "version"); !strings.HasPrefix(out, "loom 1.2.3-test (go") {
		t.Fatalf("version = %q", out)
	}
	v := clitest.DecodeJSON[map[string]string](t, fx.MustRun(t, "version", "--json"))
	if v["version"] != "1.2.3-test" {
		t.Fatalf("version --json = %v", v)
	}
}

func TestHelpHasExamples(t *testing.T) {
	t.Parallel()
	root := cli.NewRootCmd(command.NewInvocation(&cli.Factory{IO: &term.IOStreams{}}))
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
	fx := clitest.NewEmptyFixture(t)
	out := fx.MustRun(t, "session", "fork", "--help")
	if !strings.Contains(out, "Examples:") || !strings.Contains(out, "--turn") {
		t.Fatalf("fork --help:\n%s", out)
	}
}

// nilMap is a map not made, whose write panics at run time.
func nilMap() map[string]int { return nil }

// A panic anywhere in a command is one line on stderr, exit 1, and a
// report with the stack in the state directory, never a stack trace.
func TestPanicIsOneLine(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ios, _, out, errOut := term.Test()
	f := &cli.Factory{
		IO:    ios,
		Env:   func(k string) string { return map[string]string{"LOOM_HOME": home}[k] },
		Getwd: func() (string, error) { return home, nil },
		OpenStore: func(ctx context.Context, url string, access cli.Access, _ ...sessionstore.Option) (loom.Engine, error) {
			m := nilMap()
			m["boom"]++ // a nil map write: a runtime panic
			return nil, nil
		},
	}
	code := cli.Main(f, []string{"session", "list"})
	if code != cli.ExitError {
		t.Fatalf("exit %d, want %d", code, cli.ExitError)
	}
	msg := errOut.String()
	if len(clitest.Lines(msg)) != 1 || !strings.HasPrefix(msg, "loom: internal error: assignment to entry in nil map (details in ") {
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
