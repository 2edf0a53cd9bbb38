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

// TestTeamFlagAlone: --team without a NAME reads the only team; --team
// NAME with a space still names the team when NAME is one of this
// machine's; with two teams, --team alone is a usage error naming them.
func TestTeamFlagAlone(t *testing.T) {
	p, id := sharedWombat(t)
	bob := p.bob
	for _, args := range [][]string{
		{"search", "--team", "wombat"},
		{"search", "wombat", "--team"},
		{"search", "--team", "core", "wombat"},
		{"search", "--team=core", "wombat"},
		{"session", "list", "--team"},
		{"session", "show", "--team", id[:8]},
		{"recall", "--team", "wombat ledger"},
		{"usage", "--team"},
		{"usage", "--team", "core", "session"},
	} {
		if out := bob.must(t, args...); !strings.Contains(out, id) {
			t.Errorf("loom %s: %s", strings.Join(args, " "), out)
		}
	}
	// A word after --team that is not a team is the command's: here the
	// query, not found in the only team.
	if r := bob.run(t, "search", "--team", "--", "core"); r.Code != 0 || strings.Contains(r.Stdout, id) {
		t.Errorf("search --team -- core: exit %d, %s%s", r.Code, r.Stdout, r.Stderr)
	}
	// A word after --team that names no team, where the command takes
	// none: the usage error says it is no team.
	if r := bob.run(t, "session", "list", "--team", "nope"); r.Code != 2 || !strings.Contains(r.Stderr, `--team was given no NAME: no team "nope" on this machine (core `) {
		t.Errorf("session list --team nope: exit %d, %q", r.Code, r.Stderr)
	}
	bob.must(t, "team", "sync", "--team")
	bob.must(t, "team", "create", "web")
	r := bob.run(t, "search", "--team", "wombat")
	if r.Code != 2 || strings.TrimSpace(r.Stderr) != "loom: you are in 2 teams (core, web): say which with --team NAME" {
		t.Errorf("search --team in two teams: exit %d, %q", r.Code, r.Stderr)
	}
	if r := bob.run(t, "team", "members", "--team"); r.Code != 2 || !strings.Contains(r.Stderr, "you are in 2 teams (core, web)") {
		t.Errorf("team members --team in two teams: exit %d, %q", r.Code, r.Stderr)
	}
	if out := bob.must(t, "search", "--team", "core", "wombat"); !strings.Contains(out, id) {
		t.Errorf("search --team core wombat in two teams: %s", out)
	}
	none := clitest.NewEmptyFixture(t)
	if r := none.Exec(t, "", "session", "list", "--team"); r.Code != 3 || strings.TrimSpace(r.Stderr) != "loom: this machine is in no team: loom team create NAME, or loom team join CODE" {
		t.Errorf("session list --team in no team: exit %d, %q", r.Code, r.Stderr)
	}
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
