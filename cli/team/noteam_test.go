package team_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// On a machine in no team, with no hub set up: each team command says
// the machine is in no team (not that no hub token is set), one line;
// a bad flag is refused before anything else; the list says it is
// empty on stderr and exits 0.
func TestTeamCommandsInNoTeam(t *testing.T) {
	fx := clitest.NewEmptyFixture(t)
	if r := fx.Exec(t, "", "team", "list"); r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "in no team") {
		t.Errorf("team list: exit %d, %q, %q", r.Code, r.Stdout, r.Stderr)
	}
	for _, args := range [][]string{{"members"}, {"invites"}, {"invite"}, {"sync"}, {"leave"}, {"remove", "bob"}} {
		r := fx.Exec(t, "", append([]string{"team"}, args...)...)
		if r.Code == 0 || !strings.Contains(r.Stderr, "this machine is in no team") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("team %v: exit %d, %q", args, r.Code, r.Stderr)
		}
	}
	if r := fx.Exec(t, "", "team", "invite", "--expires", "bogus"); r.Code != 2 || !strings.Contains(r.Stderr, `--expires "bogus"`) {
		t.Errorf("team invite --expires bogus: exit %d, %q", r.Code, r.Stderr)
	}
}
