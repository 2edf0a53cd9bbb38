package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/teamrun"
)

// Teams returns where this machine keeps its teams.
func (inv *Invocation) Teams() (teamrun.Local, error) {
	d, err := inv.Dirs()
	if err != nil {
		return teamrun.Local{}, err
	}
	return teamrun.Local{Dir: d.TeamsDir()}, nil
}

// TeamFlag gives cmd --team [NAME] into ref: every command that takes a
// team takes it so, the same way. --team=NAME names a team; --team
// alone leaves ref OnlyTeam, the only team of this machine (FindTeam).
// "--team NAME", with a space, names the team when NAME is one of this
// machine's teams: Main joins the two words before the flags are read
// (TeamValues); any other word after it is the command's.
func TeamFlag(cmd *cobra.Command, ref *string, usage string) {
	cmd.Flags().StringVar(ref, "team", "", usage)
	cmd.Flags().Lookup("team").NoOptDefVal = OnlyTeam
}

// OnlyTeam is the value of --team given without a NAME: the only team
// of this machine. No team's name is blank.
const OnlyTeam = PickRef

// FindTeam returns the team ref names on this machine: its name or id
// (teamrun.Local.Find), the only team for "" and OnlyTeam. --team alone
// on a machine in two teams or more is a usage error that names them.
func (inv *Invocation) FindTeam(ref string) (*teamrun.State, error) {
	l, err := inv.Teams()
	if err != nil {
		return nil, err
	}
	if ref != OnlyTeam {
		return l.Find(ref)
	}
	all, err := l.Teams()
	if err != nil {
		return nil, err
	}
	if len(all) < 2 {
		return l.Find("")
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	// This error asks for a NAME already: TeamHint adds nothing to it.
	inv.teamWord = ""
	return nil, UsageErrorf("you are in %d teams (%s): say which with --team NAME", len(all), strings.Join(names, ", "))
}

// TeamValues returns args with each "--team NAME" whose NAME is one of
// this machine's teams (a word --team=NAME would take: its name, its id
// or a prefix of it) written "--team=NAME", so that the flag, whose
// value may be left out, takes it; "--team" followed by anything else
// is --team alone, the word after it the command's. Words after "--"
// are left as they are.
func (inv *Invocation) TeamValues(args []string) []string {
	var l *teamrun.Local
	names := func(word string) bool {
		if l == nil {
			got, err := inv.Teams()
			if err != nil {
				return false
			}
			l = &got
		}
		_, err := l.Find(word)
		return err == nil || loom.ErrorCode(err) == loom.EAMBIGUOUS
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		if args[i] == "--team" && i+1 < len(args) && args[i+1] != "" && !strings.HasPrefix(args[i+1], "-") {
			if names(args[i+1]) {
				out = append(out, "--team="+args[i+1])
				i++
				continue
			}
			inv.teamWord = args[i+1]
		}
		out = append(out, args[i])
	}
	return out
}

// TeamHint adds to a usage error of a run whose --team was followed by
// a word that names no team of this machine (so --team was read alone,
// and the word as the command's) that the word is no team: "session
// list --team nope" says so, not only that list takes no arguments.
func (inv *Invocation) TeamHint(err error) error {
	var ue *UsageError
	if inv.teamWord == "" || !errors.As(err, &ue) {
		return err
	}
	l, lerr := inv.Teams()
	if lerr != nil {
		return err
	}
	if _, ferr := l.Find(inv.teamWord); ferr != nil {
		return UsageErrorf("%s; --team was given no NAME: %s", ue.Msg, loom.ErrorMessage(ferr))
	}
	return err
}

// TeamStoreFile returns the store of the team ref names on this
// machine, and the team.
func (inv *Invocation) TeamStoreFile(ref string) (string, *teamrun.State, error) {
	l, err := inv.Teams()
	if err != nil {
		return "", nil, err
	}
	s, err := inv.FindTeam(ref)
	if err != nil {
		return "", nil, err
	}
	path := l.StoreFile(s.ID)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return "", nil, loom.Errorf(loom.ENOTFOUND, "team %s: nothing of it is on this machine yet: run loom team sync", s.Name)
	}
	return path, s, nil
}

// UseTeam makes the run's store the team's store on this machine (the
// teammates' shared sessions, apart from one's own), for a command given
// --team.
func (inv *Invocation) UseTeam(ref string) error {
	path, tm, err := inv.TeamStoreFile(ref)
	if err != nil {
		return err
	}
	if err := inv.closeStore(); err != nil {
		return err
	}
	inv.flags.db, inv.team, inv.teamState = "sqlite:"+path, tm.ID, tm
	return nil
}

// Team is the team whose store --team made the run's store (nil for
// none).
func (inv *Invocation) Team() *teamrun.State { return inv.teamState }

// InTeam reports whether --team made the run's store a team's: nothing
// of one's own (the agents' new sessions) is imported into it.
func (inv *Invocation) InTeam() bool { return inv.team != "" }

// AddTeamFlag gives cmd --team [NAME] (TeamFlag): the command reads
// the team's shared sessions on this machine instead of one's own.
func (inv *Invocation) AddTeamFlag(cmd *cobra.Command) {
	var ref string
	TeamFlag(cmd, &ref, "read the sessions team `NAME` shares (synced by loom team sync), not your own; alone, the only team's")
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if c.Flags().Changed("team") {
			if err := inv.UseTeam(ref); err != nil {
				return err
			}
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// TeamStore is a team's store on this machine, open.
type TeamStore struct {
	Team  *teamrun.State
	Store loom.Engine
}

// TeamStores opens the stores of the teams this machine is in or was,
// for a command that reads them besides one's own (loom blame): the
// team ref names, or every team synced here when ref is "". They are
// closed when the run ends.
func (inv *Invocation) TeamStores(ctx context.Context, ref string) ([]TeamStore, error) {
	l, err := inv.Teams()
	if err != nil {
		return nil, err
	}
	var teams []*teamrun.State
	if ref != "" {
		s, err := inv.FindTeam(ref)
		if err != nil {
			return nil, err
		}
		teams = []*teamrun.State{s}
	} else if teams, err = l.Teams(); err != nil {
		return nil, err
	}
	var out []TeamStore
	for _, s := range teams {
		path := l.StoreFile(s.ID)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if ref != "" {
				return nil, loom.Errorf(loom.ENOTFOUND, "team %s: nothing of it is on this machine yet: run loom team sync", s.Name)
			}
			continue
		}
		st, err := inv.OpenStore(ctx, "sqlite:"+path, AccessWrite)
		if err != nil {
			return nil, fmt.Errorf("team %s: %w", s.Name, err)
		}
		inv.teamStores = append(inv.teamStores, st)
		out = append(out, TeamStore{Team: s, Store: st})
	}
	return out, nil
}
