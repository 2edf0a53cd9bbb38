package cli

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/termtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// startChatPTY runs loom with a fake model server on a cols×rows
// terminal.
func (fx *fixture) startChatPTY(t *testing.T, cols, rows int, args ...string) *termtest.Term {
	t.Helper()
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	cmd := exec.Command(loomBinary(t), args...)
	cmd.Dir, cmd.Env = fx.project, fx.binEnv(append(providerEnv(srv), "TERM=xterm-256color")...)
	return termtest.Start(t, cmd, cols, rows)
}

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
	forTermSizes(t, func(t *testing.T, cols, rows int) {
		fx := newEmptyFixture(t)
		st := fx.openStore(t)
		at := time.Now().Add(-time.Hour)
		s := &loom.Session{ID: idAt(at), UserID: "local", Key: "cli:api", Project: fx.proj, Cwd: fx.project, Title: "Three lines"}
		reply := textMsg(loom.RoleAssistant, "Alpha line.\nBeta line.\nGamma line.", at.Add(time.Second))
		reply.Model, reply.Provider = "gpt-4o-mini", "openai"
		if err := st.Append(context.Background(), s, textMsg(loom.RoleUser, "three lines please", at), reply); err != nil {
			t.Fatal(err)
		}
		st.Close()
		p := fx.startChatPTY(t, cols, rows, "session", "resume", s.ID)
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
func seedAged(t *testing.T, fx *fixture, word string, agos ...time.Duration) []*loom.Session {
	t.Helper()
	st := fx.openStore(t)
	var out []*loom.Session
	for i, ago := range agos {
		at := time.Now().Add(-ago)
		fx.clock = at // the store's clock: fx.now
		s := &loom.Session{ID: idAt(at), UserID: "local", Key: "cli:api:" + string(rune('a'+i)), Project: fx.proj, Cwd: fx.project, Title: "Session " + string(rune('A'+i))}
		reply := textMsg(loom.RoleAssistant, "the "+word+" answer", at)
		if err := st.Append(context.Background(), s, textMsg(loom.RoleUser, "the "+word+" question", at), reply); err != nil {
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
	fx := newEmptyFixture(t)
	seedAged(t, fx, "zebra", 3*time.Hour+time.Minute, 2*24*time.Hour+time.Hour)
	p := fx.startChatPTY(t, 100, 40, "session", "resume")
	waitScreen(t, p, "Session A", "Session B", "3h ago", "2d ago")
	p.Send("\x12")
	waitScreen(t, p, "title: Session A")
	p.Send("\x15Renamed A\r")
	waitScreen(t, p, `to "Renamed A"? y to save`)
	p.Send("y")
	waitScreen(t, p, `Renamed to "Renamed A".`)
	waitScreen(t, p, "Renamed A", "Session B")
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
	list := fx.startPTYSize(t, 100, 40, "session", "list")
	list.Wait(t)
	if got := screenRow(list.Screen(), "Renamed A"); !strings.Contains(got, "just now") {
		t.Fatalf("session list after the rename (%q):\n%s", got, list.Screen())
	}
}

// loom session list and loom search say how long ago in the same short
// form on a terminal ("3h ago", never "3 hours ago" in one of them).
func TestAgesAgreeInListAndSearch(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	seedAged(t, fx, "zebra", 3*time.Hour+time.Minute, 2*24*time.Hour+time.Hour)
	for _, args := range [][]string{{"session", "list"}, {"search", "zebra", "answer"}} {
		p := fx.startPTYSize(t, 100, 40, args...)
		if code := p.Wait(t); code != 0 {
			t.Fatalf("loom %s: exit %d:\n%s", strings.Join(args, " "), code, p.Output())
		}
		screen := p.Screen()
		if !strings.Contains(screen, "3h ago") || !strings.Contains(screen, "2d ago") || strings.Contains(screen, "hours") || strings.Contains(screen, "days") {
			t.Errorf("loom %s does not say 3h ago and 2d ago:\n%s", strings.Join(args, " "), screen)
		}
	}
}
