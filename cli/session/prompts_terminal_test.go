package session_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// The session commands' questions, on a real 80×24 terminal: what is
// typed shows, Enter answers (the chooser of fork takes Enter alone as
// "every turn"), anything but yes keeps the session, and Ctrl+C gives
// up without a change.
func TestQuestionsOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)

	p := fx.StartPTYSize(t, 80, 24, "session", "delete", fx.Web.ID)
	p.WaitFor(t, "Move 1 session to the trash? [y/N]")
	p.Send("n")
	clitest.WaitScreen(t, p, "Move 1 session to the trash? [y/N] n")
	p.Send("\r")
	if code := p.Wait(t); code != cli.ExitError || !strings.Contains(p.Output(), "Nothing deleted") {
		t.Fatalf("declined delete: exit %d:\n%s", code, p.Output())
	}

	p = fx.StartPTYSize(t, 80, 24, "session", "delete", fx.Web.ID)
	p.WaitFor(t, "Move 1 session to the trash? [y/N]")
	p.Send("\x03")
	if code := p.Wait(t); code == 0 || !strings.Contains(p.Output(), "interrupted") {
		t.Fatalf("Ctrl+C at the question: exit %d:\n%s", code, p.Output())
	}
	fx.MustRun(t, "session", "show", fx.Web.ID)

	// The session asked about is listed in whole words at 80 columns.
	fx.MustRun(t, "session", "rename", fx.Web.ID, "Deploy notes for the web app")
	p = fx.StartPTYSize(t, 80, 24, "session", "delete", fx.Web.ID)
	p.WaitFor(t, "Move 1 session to the trash? [y/N]")
	if h := strings.Join(strings.Fields(p.History()), " "); !strings.Contains(h, fx.Web.ID+` "Deploy notes for the web app" 2 messages`) {
		t.Fatalf("the session to delete is not listed in whole words at 80 columns:\n%s", p.History())
	}
	p.Send("y\r")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("confirmed delete: exit %d:\n%s", code, p.Output())
	}
	if r := fx.Run(t, "session", "show", fx.Web.ID); r.Code != cli.ExitNotFound {
		t.Fatalf("the confirmed delete left the session: exit %d", r.Code)
	}

	p = fx.StartPTYSize(t, 80, 24, "session", "fork", fx.Main.ID[:8])
	p.WaitFor(t, "Fork after which turn? [1-3, enter for all]")
	p.Send("\r")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("fork at every turn: exit %d:\n%s", code, p.Output())
	}

	p = fx.StartPTYSize(t, 80, 24, "session", "rewind", fx.Main.ID[:8])
	p.WaitFor(t, "Keep turns up to which turn? [1-2]")
	p.Send("\x03")
	if code := p.Wait(t); code == 0 {
		t.Fatalf("Ctrl+C at the rewind's question: exit 0:\n%s", p.Output())
	}
	p = fx.StartPTYSize(t, 80, 24, "session", "rewind", fx.Main.ID[:8])
	p.WaitFor(t, "Keep turns up to which turn? [1-2]")
	p.Send("1\r")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("rewind to turn 1: exit %d:\n%s", code, p.Output())
	}
	if s, err := fx.OpenStore(t).Session(t.Context(), fx.Main.ID); err != nil || s.TurnCount != 1 {
		t.Fatalf("after choosing turn 1: %+v, %v", s, err)
	}
}
