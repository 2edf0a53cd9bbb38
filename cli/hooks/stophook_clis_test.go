package hooks_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// The real Claude Code with only its Stop hook set to loom's: when each
// turn of `claude -p` ends, loom holds that turn's reply (Claude Code may
// fire Stop before it writes the reply to the transcript; the hook's
// payload names it, and the hook waits for it).
func TestClaudeCodeStopHookOnly(t *testing.T) {
	clitest.RealAgentsOnce(t)
	claude := clitest.NewHookedClaude(t, map[string]string{"Stop": "session import --hook claude-code"})
	fx := claude.Fx
	replies := func() []string {
		t.Helper()
		st := fx.OpenStore(t)
		defer st.Close()
		ss, err := st.Sessions(t.Context(), loom.SessionFilter{UserID: "local", Surface: "claude-code"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range ss {
			msgs, err := st.Messages(t.Context(), s.ID, loom.MessageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if m.Role == loom.RoleAssistant && strings.TrimSpace(m.Text()) != "" {
					out = append(out, strings.TrimSpace(m.Text()))
				}
			}
		}
		return out
	}
	prompts := []string{"Which file holds the fix?", "And what should the test use?", "Thanks, and the docs?"}
	for i, p := range prompts {
		var flags []string
		if i > 0 {
			flags = []string{"--continue"}
		}
		reply := claude.Ask(t, p, flags...)
		// claude may print notices before the reply: the reply ends what
		// it printed.
		got := replies()
		found := false
		for _, r := range got {
			found = found || (strings.HasSuffix(reply, r) && strings.HasSuffix(r, p))
		}
		if !found || len(got) != i+1 {
			t.Fatalf("turn %d ended and loom does not hold its reply (it holds %d replies)", i+1, len(got))
		}
	}
}
