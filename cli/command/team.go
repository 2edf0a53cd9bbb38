package command

import (
	"context"
	"errors"
	"fmt"
	"os"

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

// TeamStoreFile returns the store of the team ref names on this
// machine, and the team.
func (inv *Invocation) TeamStoreFile(ref string) (string, *teamrun.State, error) {
	l, err := inv.Teams()
	if err != nil {
		return "", nil, err
	}
	s, err := l.Find(ref)
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

// AddTeamFlag gives cmd --team NAME: the command reads the team's
// shared sessions on this machine instead of one's own.
func (inv *Invocation) AddTeamFlag(cmd *cobra.Command) {
	var ref string
	cmd.Flags().StringVar(&ref, "team", "", "read the sessions team `NAME` shares (synced by loom team sync), not your own")
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
		s, err := l.Find(ref)
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
