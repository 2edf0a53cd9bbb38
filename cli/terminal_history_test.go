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
