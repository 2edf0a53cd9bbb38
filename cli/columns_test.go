package cli_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// Every command's --help fits 80 columns when it is not printed on a
// terminal (a pipe, a file), run as a user runs it: the built binary;
// and each of its examples is there whole, on a line of its own, so
// that none wraps into what reads as a second command.
func TestEveryHelpFits80Columns(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	root := cli.NewRootCmd(command.NewInvocation(&cli.Factory{IO: &term.IOStreams{}}))
	type entry struct {
		path []string
		cmd  *cobra.Command
	}
	cmds := []entry{{nil, root}}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			p := append(slices.Clone(path), sub.Name())
			cmds = append(cmds, entry{p, sub})
			walk(sub, p)
		}
	}
	walk(root, nil)
	if len(cmds) < 40 {
		t.Fatalf("only %d commands", len(cmds))
	}
	for _, e := range cmds {
		name := strings.TrimSpace("loom " + strings.Join(e.path, " "))
		r := fx.Exec(t, "", append(e.path, "--help")...)
		if r.Code != 0 {
			t.Errorf("%s --help: exit %d: %s", name, r.Code, r.Stderr)
			continue
		}
		lines := strings.Split(r.Stdout, "\n")
		for i, l := range lines {
			if w := ansi.StringWidth(l); w > 80 {
				t.Errorf("%s --help, line %d: %d columns: %q", name, i+1, w, l)
			}
		}
		// A usage too wide goes on further in than a command starts.
		section := ""
		for _, l := range lines {
			if l != "" && l[0] != ' ' {
				section = l
			}
			if section == "Usage:" && l != section && l != "" && !strings.HasPrefix(l, "  "+name) && !strings.HasPrefix(l, "      ") {
				t.Errorf("%s --help: a line of its usage reads as a command of its own: %q\n%s", name, l, r.Stdout)
			}
		}
		for _, ex := range strings.Split(e.cmd.Example, "\n") {
			if strings.TrimSpace(ex) != "" && !slices.Contains(lines, strings.TrimRight(ex, " ")) {
				t.Errorf("%s --help at 80 columns does not show the example %q whole on a line:\n%s", name, ex, r.Stdout)
			}
		}
	}
}

// --jq filters any command's JSON as gh's does: strings as they are,
// other values as JSON on one line for a pipe; a bad expression is a
// usage error in one line.
func TestJQFiltersJSON(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	rows := clitest.DecodeJSON[[]map[string]any](t, fx.MustExec(t, "session", "list", "--json"))
	if len(rows) < 2 {
		t.Fatalf("the fixture lists %d sessions", len(rows))
	}
	var want strings.Builder
	for _, r := range rows {
		want.WriteString(r["title"].(string) + "\n")
	}
	if got := fx.MustExec(t, "session", "list", "--jq", ".[].title"); got != want.String() {
		t.Errorf("--jq .[].title:\n%s\nwant:\n%s", got, want.String())
	}
	if got := fx.MustExec(t, "session", "list", "--jq", "[.[] | {id}] | .[0]"); got != `{"id":"`+rows[0]["id"].(string)+`"}`+"\n" {
		t.Errorf("--jq object: %q", got)
	}
	if got := fx.MustExec(t, "session", "list", "--jq", "length"); got != strconv.Itoa(len(rows))+"\n" {
		t.Errorf("--jq length: %q", got)
	}
	r := fx.Exec(t, "", "session", "list", "--jq", ".[")
	if r.Code != 2 || r.Stdout != "" || len(clitest.Lines(r.Stderr)) != 1 || !strings.HasPrefix(r.Stderr, "loom: --jq: ") {
		t.Errorf("a bad expression: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = fx.Exec(t, "", "session", "list", "--jq", `error("stop")`)
	if r.Code != 1 || !strings.Contains(r.Stderr, "stop") {
		t.Errorf("an expression's error: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// loom --version is loom version, as most programs have it.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	want := fx.MustExec(t, "version")
	if got := fx.MustExec(t, "--version"); got != want || !strings.HasPrefix(got, "loom ") {
		t.Errorf("loom --version = %q, loom version = %q", got, want)
	}
	if got := fx.MustExec(t, "--version", "--json"); got != fx.MustExec(t, "version", "--json") {
		t.Errorf("loom --version --json = %q", got)
	}
}

// An error on a narrow terminal is wrapped at words: the terminal never
// cuts a word or an id in two (piped, it stays one line for scripts).
func TestErrorWrapsOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	term := fx.StartPTYSize(t, 40, 20, "session", "show", "no-such-session-anywhere-here")
	if code := term.Wait(t); code != 3 {
		t.Errorf("exit %d, want 3 (not found)", code)
	}
	out := strings.TrimSpace(term.Output())
	lines := strings.Split(out, "\n")
	if len(lines) < 2 {
		t.Fatalf("not wrapped at 40 columns: %q", out)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(strings.TrimRight(l, "\r")); w > 40 {
			t.Errorf("%d columns: %q", w, l)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), `no session matches "no-such-session-anywhere-here"`) {
		t.Errorf("a word cut in two: %q", out)
	}
	if r := fx.Exec(t, "", "session", "show", "no-such-session-anywhere-here"); len(clitest.Lines(r.Stderr)) != 1 {
		t.Errorf("piped: %q", r.Stderr)
	}
}
