package team_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// elsewhere runs loom as m from a directory of no project the team
// shares (none of m's).
func (m *member) elsewhere(t *testing.T, args ...string) clitest.Result {
	t.Helper()
	cmd := exec.Command(clitest.LoomBinary(t), args...)
	cmd.Dir, cmd.Env = t.TempDir(), m.fx.BinEnv()
	return clitest.ExecCmd(t, cmd, "")
}

// sharedWombat is a pair whose alice shares a session that says
// "wombat", synced to bob.
func sharedWombat(t *testing.T) (*pair, string) {
	t.Helper()
	p := newPair(t)
	const id = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9f01"
	importSession(t, p.alice, id, "wombat ledger", "why is the wombat ledger off by one", "The wombat ledger counted the header row.")
	p.alice.must(t, "team", "share", "--content", "--yes")
	p.alice.must(t, "team", "sync")
	p.bob.must(t, "team", "sync")
	return p, id
}

// TestTeamReadsEveryProject: --team reads every project the team
// shares, from any directory, without -a: a teammate's clone may sit
// anywhere, or nowhere.
func TestTeamReadsEveryProject(t *testing.T) {
	p, id := sharedWombat(t)
	for _, args := range [][]string{
		{"search", "--team", "core", "wombat"},
		{"session", "list", "--team", "core"},
	} {
		if r := p.bob.elsewhere(t, args...); r.Code != 0 || !strings.Contains(r.Stdout, id) {
			t.Errorf("loom %s outside the project: exit %d, %s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
}
