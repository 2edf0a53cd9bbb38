package session_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

func TestSessionForkAndRename(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	out := fx.MustRun(t, "session", "fork", fx.Main.ID, "--turn", "2", "--name", "second try")
	id := strings.TrimSpace(out)
	if len(id) != 36 {
		t.Fatalf("fork printed %q, want the new id", out)
	}
	got := clitest.DecodeJSON[struct {
		Session  *loom.Session   `json:"session"`
		Messages []*loom.Message `json:"messages"`
	}](t, fx.MustRun(t, "session", "show", id, "--json", "--full-history"))
	if got.Session.Kind != loom.KindFork || got.Session.ParentID != fx.Main.ID || got.Session.ForkTurn != 2 || got.Session.TurnCount != 2 ||
		got.Session.Title != "second try" {
		t.Fatalf("fork = %+v", got.Session)
	}
	if last := got.Messages[len(got.Messages)-1]; last.Role != loom.RoleSystem {
		t.Fatalf("fork at turn 2 ends with %s %q", last.Role, last.Text())
	}

	// Without --turn off a terminal: every turn.
	all := clitest.DecodeJSON[*loom.Session](t, fx.MustRun(t, "session", "fork", fx.Main.ID, "--json"))
	if all.TurnCount != 3 || all.MessageCount != 9 || all.Title != "Fix the flaky test (fork)" {
		t.Fatalf("fork of all turns = %+v", all)
	}

	if out := fx.MustRun(t, "session", "rename", id, "  Third try "); out != "" {
		t.Fatalf("rename printed %q when piped", out)
	}
	if got := clitest.DecodeJSON[*loom.Session](t, fx.MustRun(t, "session", "resume", "third TRY", "--json")); got.ID != id {
		t.Fatalf("renamed title resolves to %s, want %s", got.ID, id)
	}
	// On a terminal the id is shortened to a prefix that resolves back
	// to it: sessions made in the same minute share their first 8
	// characters.
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "rename", id, "Fourth")
	shown, _, _ := strings.Cut(strings.TrimPrefix(ansi.Strip(r.Stdout), "✓ Renamed "), " ")
	if len(shown) < 8 || len(shown) >= len(id) || !strings.HasPrefix(id, shown) || !strings.Contains(r.Stdout, `from "Third try" to "Fourth"`) {
		t.Fatalf("rename on a terminal said %q", r.Stdout)
	}
	if got := clitest.DecodeJSON[*loom.Session](t, fx.MustRun(t, "session", "resume", shown, "--json")); got.ID != id {
		t.Fatalf("the id rename printed, %s, resolves to %s", shown, got.ID)
	}
	if r := fx.Run(t, "session", "rename", id, " "); r.Code != cli.ExitUsage {
		t.Fatalf("empty title: exit %d", r.Code)
	}
}

func TestSessionForkChoosesTurnOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Tty: true, Stdin: "7\n1\n"}, "session", "fork", fx.Main.ID)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	plain := ansi.Strip(r.Stdout)
	for _, want := range []string{"Turns of Fix the flaky test:", "1  Why does TestRetry flake?", "2  Use a fake clock then.", "3  thanks",
		"Fork after which turn? [1-3, enter for all]", "Please give a number from 1 to 3."} {
		if !strings.Contains(plain, want) {
			t.Fatalf("turn chooser lacks %q:\n%s", want, plain)
		}
	}
	last := strings.Fields(clitest.Lines(plain)[len(clitest.Lines(plain))-1])
	id := last[len(last)-1]
	s := clitest.DecodeJSON[*loom.Session](t, fx.MustRun(t, "session", "resume", id, "--json"))
	if s.ForkTurn != 1 || s.TurnCount != 1 {
		t.Fatalf("chosen turn 1, got fork_turn %d, %d turns", s.ForkTurn, s.TurnCount)
	}
}

// A fork made on the command line becomes the project's most recent
// session, which bare loom resumes: on a terminal the fork says so, and
// names the way back to the session it was made from.
func TestSessionForkSaysWhatLoomResumes(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "fork", fx.Main.ID, "--turn", "1")
	if r.Code != 0 {
		t.Fatalf("fork: exit %d: %s", r.Code, r.Stderr)
	}
	m := regexp.MustCompile(`loom alone now continues the fork, the project's most recent session; loom chat -r (\S+) goes back to "Fix the flaky test"\.`).
		FindStringSubmatch(strings.Join(strings.Fields(ansi.Strip(r.Stderr)), " "))
	if m == nil {
		t.Fatalf("fork on a terminal said:\n%s", r.Stderr)
	}
	if got := clitest.DecodeJSON[*loom.Session](t, fx.MustRun(t, "session", "resume", m[1], "--json")); got.ID != fx.Main.ID {
		t.Fatalf("the way back, %s, names %s, not %s", m[1], got.ID, fx.Main.ID)
	}
	if r := fx.Run(t, "session", "fork", fx.Main.ID, "--turn", "1"); strings.Contains(r.Stderr, "continues") {
		t.Fatalf("piped, the fork explained itself: %q", r.Stderr)
	}
}
