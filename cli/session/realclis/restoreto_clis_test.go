package realclis_test

import (
	"cmp"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// TestRestoreToRealCLIs: a session of each agent's own, imported into
// loom and not in the agent's store (as once the agent has deleted it),
// is put back with loom session restore-to under the agent's own id;
// the real agent (run offline against a fake model server) resumes it
// by that id, and the model is sent the whole history with the new
// prompt; importing the agent's sessions then adds the new turn to the
// same session in loom (no copy, no fork). Restoring it again while the
// agent has it is refused, and nothing is written.
func TestRestoreToRealCLIs(t *testing.T) {
	clitest.RealAgentsOnce(t)
	for _, a := range realAgents {
		if a.name != "" {
			continue // a second setup of an agent: its first is enough
		}
		t.Run(a.tool, func(t *testing.T) {
			t.Parallel()
			bin := agentclitest.Install(t, a.pkg)
			fx := clitest.NewFixture(t)
			srv, env, root, _ := a.start(t, fx.Home)
			timeout := cmp.Or(a.timeout, clitest.CLITimeout)
			if a.first {
				agentclitest.Run(t, timeout, fx.Project, env, bin, a.fresh("An earlier session of its own.")...)
			}
			src := fx.SourceSession(t, a.tool, a.sample)
			id := strings.TrimPrefix(src.Key, a.tool+":")
			restore := func() clitest.Result {
				// On the real clock: a file named by the time (Codex's
				// rollouts) is another file at another time.
				return fx.RunWith(t, clitest.RunOpts{Before: func(f *cli.Factory) { clitest.AllFormats(f); f.Now = time.Now }},
					"session", "restore-to", a.tool, id, "--dir", fx.Project, "--json")
			}
			r := restore()
			if r.Code != 0 {
				t.Fatalf("restore-to: exit %d: %s", r.Code, r.Stderr)
			}
			out := clitest.DecodeJSON[clitest.HandoffJSON](t, r.Stdout)
			if out.SessionID != id || out.From != src.ID {
				t.Fatalf("restored as %s from %s; want %s from %s", out.SessionID, out.From, id, src.ID)
			}
			prompt := "Which file holds the fix?"
			t.Logf("%s: %s", a.tool, agentclitest.Run(t, timeout, fx.Project, env, bin, a.args(id, prompt)...))
			checkSent(t, srv, prompt, handedHistory(t, fx, src.ID, a.tool))

			r = fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", a.tool, root)
			if r.Code != 0 {
				t.Fatalf("import: exit %d: %s", r.Code, r.Stderr)
			}
			checkGrown(t, fx, a.tool, src, prompt)
			data, _ := os.ReadFile(out.Path)
			if r := restore(); r.Code != 1 || !strings.Contains(r.Stderr, "still has session") {
				t.Fatalf("restoring again: exit %d: %s", r.Code, r.Stderr)
			}
			if again, _ := os.ReadFile(out.Path); string(again) != string(data) {
				t.Fatal("restoring again changed the agent's file")
			}
		})
	}
}

// checkGrown checks that after the agent's turn on restored session
// src and an import, loom holds src alone (no copy, no fork), grown by
// the turn of prompt.
func checkGrown(t *testing.T, fx *clitest.Fixture, tool string, src *loom.Session, prompt string) {
	t.Helper()
	var same []*loom.Session
	for _, s := range clitest.DecodeJSON[[]*loom.Session](t, fx.MustRun(t, "session", "list", "-a", "--surface", tool, "--json")) {
		if s.Key == src.Key || s.ParentID == src.ID {
			same = append(same, s)
		}
	}
	if len(same) != 1 || same[0].ID != src.ID || same[0].MessageCount <= src.MessageCount {
		t.Fatalf("after the agent's turn and an import, the sessions of %s are %+v; want %s alone, grown from %d messages", src.Key, same, src.ID, src.MessageCount)
	}
	msgs := sessionMessages(t, fx, src.ID)
	if !slices.ContainsFunc(msgs, func(m *loom.Message) bool {
		return m.Role == loom.RoleUser && strings.Contains(m.Text(), prompt)
	}) {
		t.Fatalf("the session in loom lacks the new prompt %q", prompt)
	}
	// What the agent added follows what loom held: nothing loom held
	// comes again after it (a message of the same role, text and tool
	// calls).
	key := func(m *loom.Message) string {
		k := m.Role + "\x00" + m.Text()
		for _, p := range m.Parts {
			if p.Type == loom.PartTool {
				in, _ := json.Marshal(p.Input)
				k += "\x00" + p.Name + string(in)
			}
		}
		return k
	}
	held := map[string]int{}
	for i, m := range msgs[:min(src.MessageCount, len(msgs))] {
		held[key(m)] = i
	}
	for i, m := range msgs[min(src.MessageCount, len(msgs)):] {
		if j, ok := held[key(m)]; ok && m.Role != loom.RoleSystem {
			t.Fatalf("message %d of the grown session is message %d again (%s %.80q): what loom held was taken for what the agent added", src.MessageCount+i, j, m.Role, m.Text())
		}
	}
}
