package chat_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// filterTo types a filter and waits for want.
func filterTo(t *testing.T, p *termtest.Term, filter string, want ...string) {
	t.Helper()
	p.Send(filter)
	clitest.WaitScreen(t, p, append([]string{"filter: " + filter}, want...)...)
}

// TestPickerDrivesOnTerminal drives the picker of `loom chat -r` through
// the built binary on a pseudo-terminal: filter, preview, rename,
// archive, delete, search, widen to every project, and choose.
func TestPickerDrivesOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	srv := openaitest.NewServer()
	defer srv.Close()
	fx.ExtraEnv = []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_API_KEY=test"}
	p := fx.StartPTY(t, "chat", "-r")
	clitest.WaitScreen(t, p, "Sessions in api", "Fix the flaky test", "explore retry", "Twin", "5 sessions", "ctrl+r rename")
	if strings.Contains(p.Screen(), "Deploy notes") {
		t.Fatalf("another project's session is listed:\n%s", p.Screen())
	}

	// Typing filters; the preview shows the selected session's newest
	// messages.
	p.Send("Fix the flaky")
	clitest.WaitScreen(t, p, "filter: Fix the flaky", "1 of 5 sessions", "You're welcome — the fix is in clock.go.", "#9 assistant", "Use a fake clock then.")
	if strings.Contains(p.Screen(), "explore retry") {
		t.Fatalf("the filter keeps a session it does not match:\n%s", p.Screen())
	}

	// Ctrl+R renames, after a y.
	clitest.WaitScreen(t, p, "ctrl+r rename", "esc clear filter")
	p.Send("\x12")
	clitest.WaitScreen(t, p, "title: Fix the flaky test")
	p.Send("\x15Retry clock fix\r")
	clitest.WaitScreen(t, p, `Rename "Fix the flaky test" to "Retry clock fix"? y to save`)
	p.Send("y")
	clitest.WaitScreen(t, p, `Renamed to "Retry clock fix".`, "Retry clock fix")

	// Archive one twin, delete the other (each after a y).
	p.Send("\x1b")
	clitest.WaitScreen(t, p, "5 sessions", "esc quit")
	filterTo(t, p, "first twin", "1 of 5 sessions", "cli:api:1")
	p.Send("\x18")
	clitest.WaitScreen(t, p, `Archive "Twin"? y to confirm`)
	p.Send("y")
	clitest.WaitScreen(t, p, `Archived "Twin"; loom session unarchive`, "0 of 4 sessions")
	p.Send("\x1b")
	clitest.WaitScreen(t, p, "4 sessions", "esc quit")
	filterTo(t, p, "second twin", "1 of 4 sessions", "cli:api:2")
	p.Send("\x04")
	clitest.WaitScreen(t, p, `Move "Twin" to the trash? y to confirm`)
	p.Send("y")
	clitest.WaitScreen(t, p, `Moved "Twin" to the trash; loom session restore`, "0 of 3 sessions")
	p.Send("\x1b")
	clitest.WaitScreen(t, p, "3 sessions", "esc quit")

	// Search the messages: one row per session, its best snippet, and
	// its preview; the session holding every word first, then those the
	// search's later tiers find (the sub-agent that read clock.go).
	p.Send("\t")
	clitest.WaitScreen(t, p, "Messages in api", "search:")
	p.Send("fake clock")
	clitest.WaitScreen(t, p, "2 matching sessions", "Retry clock fix", "4 matches · user #5: Use a fake clock then.", "You're welcome", "explore retry")
	p.Send("\t")
	clitest.WaitScreen(t, p, "Sessions in api", "3 sessions")

	// Widen to every project, and choose another project's session.
	p.Send("\x01")
	clitest.WaitScreen(t, p, "Sessions in all projects", "Deploy notes", "ctrl+a this project")
	p.Send("Deploy")
	clitest.WaitScreen(t, p, "filter: Deploy", "With the deploy script.")
	p.Send("\r")
	p.WaitFor(t, "resuming session "+fx.Web.ID)
	p.WaitFor(t, "›")
	p.Send("\x04")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Output())
	}

	// What the picker did is in the store.
	st := fx.OpenStore(t)
	ctx := context.Background()
	if s, err := st.Session(ctx, fx.Main.ID); err != nil || s.Title != "Retry clock fix" {
		t.Fatalf("renamed session: %+v, %v", s, err)
	}
	if s, err := st.Session(ctx, fx.Twin1.ID); err != nil || s.ArchivedAt == nil || s.DeletedAt != nil {
		t.Fatalf("archived session: %+v, %v", s, err)
	}
	if s, err := st.Session(ctx, fx.Twin2.ID); err != nil || s.DeletedAt == nil {
		t.Fatalf("deleted session: %+v, %v", s, err)
	}
}

// sgrColor finds a colour in an SGR sequence (30–38, 40–48, 90–97,
// 100–107 among its parameters).
var sgrColor = regexp.MustCompile(`\x1b\[(?:[0-9;:]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:[;:][0-9;:]*)?m`)

func TestPickerWithoutColor(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	for _, args := range [][]string{{"session", "resume", "--no-color"}, {"session", "resume"}} {
		cmd := fx.StartPTY
		if len(args) == 2 {
			fx.ExtraEnv = []string{"NO_COLOR=1"}
		}
		p := cmd(t, args...)
		clitest.WaitScreen(t, p, "Sessions in api", "Fix the flaky test", "▌", "ctrl+r rename")
		p.Send("\t")
		p.Send("fake")
		clitest.WaitScreen(t, p, "Use a fake clock then.")
		if m := sgrColor.FindString(p.Raw()); m != "" {
			t.Fatalf("%v: colour %q on the terminal", args, m)
		}
		p.Send("\x03")
		if code := p.Wait(t); code != cli.ExitError || !strings.Contains(p.Output(), "no session chosen") {
			t.Fatalf("%v: ctrl+c: exit %d\n%s", args, code, p.Output())
		}
	}
}

// TestChatResumeNeedsRefOffTerminal: -r alone asks the picker, which
// needs a terminal; with a REF after it, -r resumes as before.
func TestChatResumeNeedsRefOffTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	if r := fx.Run(t, "chat", "-r"); r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "-r needs a session REF") {
		t.Fatalf("chat -r off a terminal: exit %d, %q", r.Code, r.Stderr)
	}
	if r := fx.Run(t, "-r"); r.Code != cli.ExitUsage {
		t.Fatalf("loom -r off a terminal: exit %d, %q", r.Code, r.Stderr)
	}
	if r := fx.Run(t, "chat", "-r", "a", "b"); r.Code != cli.ExitUsage {
		t.Fatalf("chat -r a b: exit %d, %q", r.Code, r.Stderr)
	}
	if r := fx.Run(t, "chat", "extra"); r.Code != cli.ExitUsage {
		t.Fatalf("chat extra: exit %d, %q", r.Code, r.Stderr)
	}
	srv := openaitest.NewServer()
	defer srv.Close()
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "test"}
	for _, args := range [][]string{
		{"chat", "-r", "fix the FLAKY test"}, {"chat", "--resume", "fix the flaky test"}, {"chat", "-r=fix the flaky test"},
		{"-r", "fix the flaky test"}, {"--no-history", "-r", fx.Main.ID[:8]},
	} {
		r := fx.RunWith(t, clitest.RunOpts{Stdin: "/exit\n", Env: env, Before: func(f *cli.Factory) { f.Providers = clitest.TestProviders() }}, args...)
		if r.Code != 0 || !strings.Contains(r.Stderr, "resuming session "+fx.Main.ID) {
			t.Fatalf("%q: exit %d, %q", args, r.Code, r.Stderr)
		}
	}
}
