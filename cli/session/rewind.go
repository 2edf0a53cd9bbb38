package session

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/chat"
	"github.com/loomhq/loom/cli/command"
)

// RewindOptions are the options of `loom session rewind`.
type RewindOptions struct {
	OneSession
	Turn    int
	HasTurn bool
}

func newCmdSessionRewind(inv *command.Invocation, runF func(*RewindOptions) error) *cobra.Command {
	opts := &RewindOptions{OneSession: newOneSession(inv)}
	cmd := &cobra.Command{
		Use:   "rewind REF --turn N",
		Short: "Take a session back to the end of a turn, keeping the rest in a fork",
		Long: `Take a session back to the end of turn N: it keeps its id and key, and
the next message continues from there. Nothing is lost: the later turns
move to a new fork, titled "… (rewound)", that holds the whole
conversation as it was; --tree shows it under the session, and its id
is printed.

On a terminal without --turn, the session's turns are listed to choose
from. Inside loom chat, /rewind [N] does the same to the session you are
in. A session another process is writing cannot be rewound (exit 5).`,
		Example: `  loom session rewind 0196a3b2 --turn 3
  loom session rewind "flaky test"
  loom session list --tree`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			var err error
			if opts.HasTurn, err = turnGiven(cmd, opts.Turn); err != nil {
				return err
			}
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return rewindRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Turn, "turn", "t", 0, "the last turn the session keeps")
	return cmd
}

// RewindResult is what --json prints: the session as it is now and the
// fork that holds the turns it gave up.
type RewindResult struct {
	Session *loom.Session `json:"session"`
	Fork    *loom.Session `json:"fork"`
}

func rewindRun(ctx context.Context, opts *RewindOptions) error {
	st, s, err := opts.StoreSession(ctx, opts.Ref)
	if err != nil {
		return err
	}
	if err := s.CanRewind(); err != nil {
		return command.UsageErrorf("%s", loom.ErrorMessage(err))
	}
	turn := opts.Turn
	if !opts.HasTurn {
		if !opts.IO.CanPrompt() {
			if s.TurnCount == 2 {
				return command.UsageErrorf("session %s has 2 turns; --turn 1 takes it back to the end of the first", s.ID)
			}
			return command.UsageErrorf("give the turn to go back to with --turn N (1 to %d)", s.TurnCount-1)
		}
		if turn, err = chat.ChooseTurn(ctx, opts.IO, st, s, "Keep turns up to which turn?", s.TurnCount-1, false); err != nil {
			return err
		}
	}
	if err := s.CheckRewindTurn(turn); err != nil {
		return command.UsageErrorf("%s", loom.ErrorMessage(err))
	}
	fork, err := st.Rewind(ctx, s.ID, loom.RewindOptions{Turn: turn})
	if err != nil {
		return err
	}
	now, err := st.Session(ctx, s.ID)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, RewindResult{Session: now, Fork: fork})
	}
	if opts.IO.IsStderrTTY() || opts.IO.IsStdoutTTY() {
		fmt.Fprintf(opts.IO.ErrOut, "Rewound %s to the end of turn %d; %s kept in %s %q.\n",
			opts.DisplayID(ctx, st, s.ID), turn, chat.LaterTurns(turn, s.TurnCount), fork.ID, fork.Title)
	}
	_, err = fmt.Fprintln(opts.IO.Out, fork.ID)
	return err
}
