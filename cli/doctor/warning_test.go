package doctor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/agentfiles"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// plantDue writes a Claude Code session into home that Claude Code
// deletes in three days (its default 30 days counted from its file's
// time), and returns its projects directory.
func plantDue(t *testing.T, home string) string {
	t.Helper()
	sample, err := os.ReadFile(filepath.Join(clitest.Samples, "claude-code", "spotter", "short.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	projects := filepath.Join(home, ".claude", "projects")
	if _, err := agentfiles.ClaudeCode(projects, "-src-due", sample, "due", days(27)); err != nil {
		t.Fatal(err)
	}
	return projects
}

// TestStatusLineWarns: the status line says when sessions are at risk
// that loom does not hold, and stops saying it once they are imported.
func TestStatusLineWarns(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	plantDue(t, fx.Home)
	o := clitest.RunOpts{Stdin: `{"model": {"display_name": "Opus"}}`, Before: func(f *cli.Factory) {
		clitest.AllFormats(f)
		f.Now = time.Now
	}}
	line := func() string {
		t.Helper()
		// The first line may come before the check behind it (it waits
		// a moment only); the check's result is there for the next.
		var out string
		for range 2 {
			r := fx.RunWith(t, o, "usage", "statusline")
			if r.Code != 0 {
				t.Fatalf("statusline: exit %d: %s", r.Code, r.Stderr)
			}
			if out = r.Stdout; strings.Contains(out, "at risk") {
				break
			}
			time.Sleep(time.Second)
		}
		return out
	}
	if got := line(); !strings.Contains(got, "⚠ 1 session at risk (loom doctor)") {
		t.Fatalf("status line with a session due in 3 days, not imported: %q", got)
	}
	if r := fx.RunWith(t, o, "session", "import", "--from", "claude-code"); r.Code != 0 {
		t.Fatalf("import: exit %d: %s", r.Code, r.Stderr)
	}
	if got := line(); strings.Contains(got, "at risk") {
		t.Fatalf("status line once it is imported: %q", got)
	}
}

// TestChatWarns: loom chat's first screen on a terminal says which agent
// will delete how many sessions loom does not hold.
func TestChatWarns(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	plantDue(t, fx.Home)
	fx.ExtraEnv = fx.Env
	want := "Claude Code will delete 1 session within 7 days that loom does not hold whole (loom doctor names them)"
	for i := range 2 {
		// The first start may show its screen before the check behind
		// the line ends; the check's result is there for the next.
		p := fx.StartPTY(t, "chat", "--new")
		p.WaitFor(t, "›")
		seen := strings.Contains(strings.Join(strings.Fields(p.Output()), " "), want)
		p.Leave(t, "›")
		if seen {
			return
		}
		if i == 1 {
			t.Fatalf("no warning on the first screen:\n%s", p.Output())
		}
	}
}
