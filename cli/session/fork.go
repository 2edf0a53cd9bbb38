package session

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/chat"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

// ForkOptions are the options of `loom session fork`.
type ForkOptions struct {
	OneSession
	Turn    int
	HasTurn bool
	Name    string
	// Team, with --team, names the team whose shared session REF is:
	// the fork is made in one's own store (teamFork).
	Team string
	// TeamFork makes the fork of a teammate's session.
	TeamFork func(ctx context.Context, opts *ForkOptions) (*loom.Session, error)
}

func newCmdSessionFork(inv *command.Invocation, runF func(*ForkOptions) error) *cobra.Command {
	opts := &ForkOptions{OneSession: newOneSession(inv)}
	opts.TeamFork = func(ctx context.Context, opts *ForkOptions) (*loom.Session, error) { return teamFork(ctx, inv, opts) }
	cmd := &cobra.Command{
		Use:   "fork REF",
		Short: "Copy a session, up to a turn, into a new session",
		Long: `Make a new session holding turns 1..N of REF (every turn without --turn)
and print its id. The new session records where it came from.

On a terminal without --turn, the session's turns are listed to choose
from. A turn is a user message and everything after it up to the next.

With --team NAME, REF is a teammate's session that team shares (loom
session list --team NAME): the fork is a session of your own, in this
project, that you continue (loom chat -r ID) or hand off to any agent
(loom session handoff ID); its description says whose session and which
turns it came from.`,
		Example: `  loom session fork 0196a3b2
  loom session fork "flaky test" --turn 3 --name "try the other fix"
  loom session fork --team core 0196a3b2
  loom session fork --team 0196a3b2          # from your only team`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			var err error
			if opts.HasTurn, err = turnGiven(cmd, opts.Turn); err != nil {
				return err
			}
			if opts.Name != "" {
				if err := loom.ValidTitle(opts.Name); err != nil {
					return command.UsageErrorf("--name: %s", loom.ErrorMessage(err))
				}
			}
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return forkRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Turn, "turn", "t", 0, "last turn to copy (default: all)")
	cmd.Flags().StringVarP(&opts.Name, "name", "n", "", "title of the new session (default: the title with \"(fork)\", or \"(fork N)\" when that is taken)")
	command.TeamFlag(cmd, &opts.Team, "REF is a session team `NAME` shares (alone: the only team): fork it into a session of your own")
	return cmd
}

func forkRun(ctx context.Context, opts *ForkOptions) error {
	if opts.Team != "" {
		fork, err := opts.TeamFork(ctx, opts)
		if err != nil {
			return err
		}
		if opts.JSON {
			return command.WriteJSON(opts.IO.Out, fork)
		}
		fmt.Fprintf(opts.IO.ErrOut, "%s.\nContinue it with loom chat -r %s, or hand it off with loom session handoff %s.\n", fork.Description, fork.ID, fork.ID)
		_, err = fmt.Fprintln(opts.IO.Out, fork.ID)
		return err
	}
	st, s, err := opts.StoreSession(ctx, opts.Ref)
	if err != nil {
		return err
	}
	turn := opts.Turn
	if !opts.HasTurn && opts.IO.CanPrompt() && s.TurnCount > 1 {
		if turn, err = chat.ChooseTurn(ctx, opts.IO, st, s, "Fork after which turn?", s.TurnCount, true); err != nil {
			return err
		}
	}
	if err := s.CheckForkTurn(turn); err != nil {
		return command.UsageErrorf("%s", loom.ErrorMessage(err))
	}
	fork, err := st.Fork(ctx, s.ID, loom.ForkOptions{Turn: turn, Title: opts.Name})
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, fork)
	}
	if opts.IO.IsStderrTTY() || opts.IO.IsStdoutTTY() {
		fmt.Fprintf(opts.IO.ErrOut, "Forked %s at turn %d of %d into %q.\n", opts.DisplayID(ctx, st, s.ID), fork.ForkTurn, s.TurnCount, fork.Title)
		if fork.Surface == loom.SurfaceCLI {
			// Bare loom resumes the project's most recently active
			// session, which the fork now is: say so, and the way back.
			fmt.Fprintln(opts.IO.ErrOut, opts.IO.WrapErr(fmt.Sprintf("loom alone now continues the fork, the project's most recent session; loom chat -r %s goes back to %q.",
				opts.DisplayID(ctx, st, s.ID), term.SanitizeLine(s.Title))))
		}
	}
	_, err = fmt.Fprintln(opts.IO.Out, fork.ID)
	return err
}
