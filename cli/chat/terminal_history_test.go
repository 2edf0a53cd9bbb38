package chat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// screenRow returns the screen's row holding s, trimmed, or "".
func screenRow(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// The history loom session resume shows keeps a reply's single newlines:
// each of its lines on a row of its own, not joined into one paragraph.
func TestResumeHistoryKeepsSingleNewlines(t *testing.T) {
	t.Parallel()
	clitest.ForTermSizes(t, func(t *testing.T, cols, rows int) {
		fx := clitest.NewEmptyFixture(t)
		st := fx.OpenStore(t)
		at := time.Now().Add(-time.Hour)
		s := &loom.Session{ID: clitest.IDAt(at), UserID: "local", Key: "cli:api", Project: fx.Proj, Cwd: fx.Project, Title: "Three lines"}
		reply := clitest.TextMsg(loom.RoleAssistant, "Alpha line.\nBeta line.\nGamma line.", at.Add(time.Second))
		reply.Model, reply.Provider = "gpt-4o-mini", "openai"
		if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "three lines please", at), reply); err != nil {
			t.Fatal(err)
		}
		st.Close()
		p := fx.StartChatPTY(t, cols, rows, "session", "resume", s.ID)
		p.WaitPrompt(t, "›")
		screen := p.Screen()
		for _, line := range []string{"Alpha line.", "Beta line.", "Gamma line."} {
			if got := screenRow(screen, line); !strings.HasSuffix(got, line) || strings.Count(got, "line.") != 1 {
				t.Fatalf("the reply's line %q is not a row of its own (%q):\n%s", line, got, screen)
			}
		}
		p.Leave(t, "›")
	})
}

// seedAged writes sessions whose last activity was ago before now, each
// with one question and one answer holding word.
func seedAged(t *testing.T, fx *clitest.Fixture, word string, agos ...time.Duration) []*loom.Session {
	t.Helper()
	st := fx.OpenStore(t)
	var out []*loom.Session
	for i, ago := range agos {
		at := time.Now().Add(-ago)
		fx.Clock = at // the store's clock: fx.now
		s := &loom.Session{ID: clitest.IDAt(at), UserID: "local", Key: "cli:api:" + string(rune('a'+i)), Project: fx.Proj, Cwd: fx.Project, Title: "Session " + string(rune('A'+i))}
		reply := clitest.TextMsg(loom.RoleAssistant, "the "+word+" answer", at)
		if err := st.Append(context.Background(), s, clitest.TextMsg(loom.RoleUser, "the "+word+" question", at), reply); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	st.Close()
	return out
}

// After a rename in the picker, every row says how long ago its last
// activity was in the same form: the renamed one, whose rename is its
// last activity, "just now" as loom session list then says, never a
// date to come because the picker counted from when it opened.
func TestPickerDatesAfterRename(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	seedAged(t, fx, "zebra", 3*time.Hour+time.Minute, 2*24*time.Hour+time.Hour)
	p := fx.StartChatPTY(t, 100, 40, "session", "resume")
	clitest.WaitScreen(t, p, "Session A", "Session B", "3h ago", "2d ago")
	p.Send("\x12")
	clitest.WaitScreen(t, p, "title: Session A")
	p.Send("\x15Renamed A\r")
	clitest.WaitScreen(t, p, `to "Renamed A"? y to save`)
	p.Send("y")
	clitest.WaitScreen(t, p, `Renamed to "Renamed A".`)
	clitest.WaitScreen(t, p, "Renamed A", "Session B")
	screen := p.Screen()
	listed := func(title string) string { return strings.TrimSpace(strings.Split(screenRow(screen, title), "│")[0]) }
	if got := listed("Renamed A"); !strings.HasSuffix(got, "just now") {
		t.Fatalf("the renamed row does not say just now (%q):\n%s", got, screen)
	}
	if got := listed("Session B"); !strings.HasSuffix(got, "2d ago") {
		t.Fatalf("the other row's age changed (%q):\n%s", got, screen)
	}
	p.Send("\x1b")
	p.Wait(t)
	list := fx.StartPTYSize(t, 100, 40, "session", "list")
	list.Wait(t)
	if got := screenRow(list.Screen(), "Renamed A"); !strings.Contains(got, "just now") {
		t.Fatalf("session list after the rename (%q):\n%s", got, list.Screen())
	}
}

// loom session list and loom search say how long ago in the same short
// form on a terminal ("3h ago", never "3 hours ago" in one of them).
func TestAgesAgreeInListAndSearch(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	seedAged(t, fx, "zebra", 3*time.Hour+time.Minute, 2*24*time.Hour+time.Hour)
	for _, args := range [][]string{{"session", "list"}, {"search", "zebra", "answer"}} {
		p := fx.StartPTYSize(t, 100, 40, args...)
		if code := p.Wait(t); code != 0 {
			t.Fatalf("loom %s: exit %d:\n%s", strings.Join(args, " "), code, p.Output())
		}
		screen := p.Screen()
		if !strings.Contains(screen, "3h ago") || !strings.Contains(screen, "2d ago") || strings.Contains(screen, "hours") || strings.Contains(screen, "days") {
			t.Errorf("loom %s does not say 3h ago and 2d ago:\n%s", strings.Join(args, " "), screen)
		}
	}
}
