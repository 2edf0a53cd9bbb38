package team

import (
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/team"
)

// Every command that works on one team takes --team=NAME (main joins
// "--team NAME" so when NAME is a team of the machine's), and --team
// alone for the only one; none takes an argument it does not name.
func TestTeamFlagOptions(t *testing.T) {
	t.Parallel()
	check := func(name string, team func(args ...string) string, reject func(args ...string) error) {
		t.Helper()
		if got := team(); got != "" {
			t.Errorf("%s: team %q without --team", name, got)
		}
		if got := team("--team=core"); got != "core" {
			t.Errorf("%s --team=core: team %q", name, got)
		}
		if got := team("--team"); got != command.OnlyTeam {
			t.Errorf("%s --team: team %q, want the only one", name, got)
		}
		cmdtest.Refused(t, reject("extra"), "too many arguments")
	}
	for name, newCmd := range map[string]func(*command.Invocation, func(*Options) error) *cobra.Command{
		"invites": newCmdInvites, "members": newCmdMembers, "leave": newCmdLeave, "doctor": newCmdDoctor, "head": newCmdHead,
	} {
		check(name, func(a ...string) string { return cmdtest.Options(t, newCmd, a...).Team },
			func(a ...string) error { return cmdtest.Rejects(t, newCmd, a...) })
	}
	check("sync", func(a ...string) string { return cmdtest.Options(t, newCmdSync, a...).Team },
		func(a ...string) error { return cmdtest.Rejects(t, newCmdSync, a...) })
	check("invite", func(a ...string) string { return cmdtest.Options(t, newCmdInvite, a...).Team },
		func(a ...string) error { return cmdtest.Rejects(t, newCmdInvite, a...) })
}

// Each command's options hold what it reads and the global --json.
func TestTeamOptionsWired(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdList, "--json"); !got.JSON || got.Teams == nil || got.IO == nil {
		t.Errorf("list --json: %+v", got)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdList, "extra"), "too many arguments")
	cmdtest.Rejects(t, newCmdList, "--team=core")
	if got := cmdtest.Options(t, newCmdSync); got.ReadStore == nil || got.OpenTeamStore == nil || got.User == nil || got.FindTeam == nil || got.Config == nil || got.JSON {
		t.Errorf("sync: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdHead, "--json"); !got.JSON || got.Now == nil {
		t.Errorf("head --json: %+v", got)
	}
}

// create takes the team's name, and the creator's, the hub and the
// token as flags.
func TestCreateOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdCreate, "core", "-n", "alice", "--hub", "http://hub:8080", "--token", "loom_x")
	if got.Name != "core" || got.Me != "alice" || got.Hub != "http://hub:8080" || got.Token != "loom_x" {
		t.Errorf("create: %+v %+v", got, got.Options)
	}
	if got := cmdtest.Options(t, newCmdCreate, "core"); got.Me != "" || got.Hub != "" || got.Token != "" {
		t.Errorf("create core: %+v", got.Options)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdCreate), "missing arguments")
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdCreate, "a", "b"), "too many arguments")
}

// An invite joins for 7 days unless --expires says otherwise ("never":
// for ever); --revoke reads no duration, and goes with none of
// --machine, --label and --expires.
func TestInviteOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdInvite); got.TTL != 7*24*time.Hour || got.Machine || got.Label != "" || got.Revoke != "" {
		t.Errorf("invite: %+v", got)
	}
	got := cmdtest.Options(t, newCmdInvite, "--label", "laptop", "--expires", "12h", "--machine", "--team=core", "--hub", "http://h:1", "--token", "loom_x")
	if got.TTL != 12*time.Hour || !got.Machine || got.Label != "laptop" || got.Team != "core" || got.Hub != "http://h:1" || got.Token != "loom_x" {
		t.Errorf("invite --label laptop --expires 12h --machine: %+v %+v", got, got.Options)
	}
	if got := cmdtest.Options(t, newCmdInvite, "--expires", "never"); got.TTL != 0 {
		t.Errorf("--expires never: ttl %v", got.TTL)
	}
	if got := cmdtest.Options(t, newCmdInvite, "--revoke", "bob"); got.Revoke != "bob" || got.TTL != 0 {
		t.Errorf("--revoke bob: %+v", got)
	}
	for _, bad := range []string{"bogus", "0d", "-1h"} {
		cmdtest.Refused(t, cmdtest.Rejects(t, newCmdInvite, "--expires", bad), `--expires "`+bad+`": want a duration`)
	}
	for _, other := range [][]string{{"--machine"}, {"--label", "x"}, {"--expires", "2d"}} {
		cmdtest.Fails(t, newCmdInvite, append([]string{"--revoke", "bob"}, other...)...)
	}
}

// join takes the code, and the joiner's name, --yes and another address
// of the hub as flags.
func TestJoinOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdJoin, "loomteam1-xyz", "--name", "bob", "-y", "--hub", "http://h2:1", "--token", "loom_b")
	if got.Code != "loomteam1-xyz" || got.Me != "bob" || !got.Yes || got.Hub != "http://h2:1" || got.Token != "loom_b" {
		t.Errorf("join: %+v %+v", got, got.Options)
	}
	if got := cmdtest.Options(t, newCmdJoin, "loomteam1-xyz"); got.Yes || got.Me != "" {
		t.Errorf("join CODE: %+v", got)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdJoin), "missing arguments")
}

// remove takes one member or MEMBER/MACHINE.
func TestRemoveOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdRemove, "bob/laptop", "--team=core"); got.Member != "bob/laptop" || got.Team != "core" || got.Yes {
		t.Errorf("remove: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdRemove, "bob/laptop", "--yes"); !got.Yes {
		t.Errorf("remove --yes: %+v", got)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdRemove), "missing arguments")
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdRemove, "bob", "carol"), "too many arguments")
}

// fork takes no word; --choose names the head chosen.
func TestForkOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdFork, "--team=core", "--choose", "6a0b34e3"); got.Choose != "6a0b34e3" || got.Team != "core" {
		t.Errorf("fork --choose: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdFork, "--json"); got.Choose != "" || !got.JSON {
		t.Errorf("fork --json: %+v", got)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdFork, "extra"), "too many arguments")
}

// set-hub takes the new address, and a token to keep.
func TestSetHubOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSetHub, "https://hub.example.com", "--team=core", "--token", "loom_n")
	if got.Hub != "https://hub.example.com" || got.Team != "core" || got.Token != "loom_n" {
		t.Errorf("set-hub: %+v", got)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdSetHub), "missing arguments")
	cmdtest.Rejects(t, newCmdSetHub, "https://hub.example.com", "--hub", "https://other")
}

// share takes what to share, one of --content and --aggregates, and a
// project; unshare only the project.
func TestShareOptions(t *testing.T) {
	t.Parallel()
	newShare := func(inv *command.Invocation, runF func(*ShareOptions) error) *cobra.Command {
		return newCmdShare(inv, true, runF)
	}
	newUnshare := func(inv *command.Invocation, runF func(*ShareOptions) error) *cobra.Command {
		return newCmdShare(inv, false, runF)
	}
	if got := cmdtest.Options(t, newShare, "--content"); got.Mode != team.ModeContent || got.Dir != "" || got.Yes || got.Project == nil || got.ReadStore == nil {
		t.Errorf("share --content: %+v", got)
	}
	if got := cmdtest.Options(t, newShare, "../api", "--aggregates", "-y", "--team=core"); got.Mode != team.ModeAggregates || got.Dir != "../api" || !got.Yes || got.Team != "core" {
		t.Errorf("share ../api --aggregates -y: %+v", got)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newShare), "say what to share")
	cmdtest.Refused(t, cmdtest.Rejects(t, newShare, "--content", "--aggregates"), "say what to share")
	cmdtest.Refused(t, cmdtest.Rejects(t, newShare, "a", "b", "--content"), "too many arguments")
	if got := cmdtest.Options(t, newUnshare, "../api", "--team=core"); got.Mode != "" || got.Dir != "../api" || got.Team != "core" {
		t.Errorf("unshare ../api: %+v", got)
	}
	cmdtest.Rejects(t, newUnshare, "--content")
}
