package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// maxTurnChoices bounds the turns listed to choose a fork point from;
// older turns can still be typed by number.
const maxTurnChoices = 30

// ForkOptions are the options of `loom session fork`.
type ForkOptions struct {
	f       *command.Factory
	Ref     string
	Turn    int
	HasTurn bool
	Name    string
}

func newCmdSessionFork(f *command.Factory) *cobra.Command {
	opts := &ForkOptions{f: f}
	cmd := &cobra.Command{
		Use:   "fork REF",
		Short: "Copy a session, up to a turn, into a new session",
		Long: `Make a new session holding turns 1..N of REF (every turn without --turn)
and print its id. The new session records where it came from.

On a terminal without --turn, the session's turns are listed to choose
from. A turn is a user message and everything after it up to the next.`,
		Example: `  loom session fork 0196a3b2
  loom session fork "flaky test" --turn 3 --name "try the other fix"`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			opts.HasTurn = cmd.Flags().Changed("turn")
			if opts.HasTurn && opts.Turn < 1 {
				return command.UsageErrorf("--turn must be 1 or more")
			}
			if opts.Name != "" {
				if err := loom.ValidTitle(opts.Name); err != nil {
					return command.UsageErrorf("--name: %s", loom.ErrorMessage(err))
				}
			}
			return forkRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Turn, "turn", "t", 0, "last turn to copy (default: all)")
	cmd.Flags().StringVar(&opts.Name, "name", "", "title of the new session (default: the title with \"(fork)\", or \"(fork N)\" when that is taken)")
	return cmd
}

func forkRun(ctx context.Context, opts *ForkOptions) error {
	f := opts.f
	st, s, err := f.StoreSession(ctx, opts.Ref)
	if err != nil {
		return err
	}
	turn := opts.Turn
	if !opts.HasTurn && f.IO.CanPrompt() && s.TurnCount > 1 {
		if turn, err = chooseTurn(ctx, f.IO, st, s, "Fork after which turn?", s.TurnCount, true); err != nil {
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
	if f.JSON() {
		return command.WriteJSON(f.IO.Out, fork)
	}
	if f.IO.IsStderrTTY() || f.IO.IsStdoutTTY() {
		fmt.Fprintf(f.IO.ErrOut, "Forked %s at turn %d of %d into %q.\n", s.ID[:min(term.ShortIDLen, len(s.ID))], fork.ForkTurn, s.TurnCount, fork.Title)
	}
	_, err = fmt.Fprintln(f.IO.Out, fork.ID)
	return err
}

// turnChoice is a turn's number and the first line of its prompt.
type turnChoice struct {
	turn   int
	prompt string
}

// recentTurns returns the last up to n turns of s, oldest first, reading
// the session backwards a page at a time so that a long session costs no
// more than a short one.
func recentTurns(ctx context.Context, st loom.Store, s *loom.Session, n int) ([]turnChoice, error) {
	var rev []turnChoice
	var before int64
	for len(rev) < n {
		msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{Limit: 200, Before: before})
		if err != nil {
			return nil, err
		}
		for i := len(msgs) - 1; i >= 0 && len(rev) < n; i-- {
			if m := msgs[i]; m.Role == loom.RoleUser {
				rev = append(rev, turnChoice{turn: m.Turn, prompt: human.FirstLine(m.Text())})
			}
		}
		if len(msgs) == 0 || msgs[0].Seq <= 1 {
			break
		}
		before = msgs[0].Seq
	}
	out := make([]turnChoice, len(rev))
	for i, c := range rev {
		out[len(rev)-1-i] = c
	}
	return out, nil
}

// chooseTurn lists the session's turns and asks question until the
// answer is a turn from 1 to last; with orAll, an empty answer means
// every turn (0), else it asks again.
func chooseTurn(ctx context.Context, ios *term.IOStreams, st loom.Store, s *loom.Session, question string, last int, orAll bool) (int, error) {
	turns, err := recentTurns(ctx, st, s, maxTurnChoices)
	if err != nil {
		return 0, err
	}
	cs := ios.ColorScheme()
	title := s.Title
	if title == "" {
		title = s.ID
	}
	fmt.Fprintf(ios.Out, "Turns of %s:\n", cs.Bold(term.SanitizeLine(title)))
	if len(turns) > 0 && turns[0].turn > 1 {
		fmt.Fprintln(ios.Out, cs.Gray(fmt.Sprintf("  (turns 1–%d not shown)", turns[0].turn-1)))
	}
	width := len(strconv.Itoa(s.TurnCount))
	for _, t := range turns {
		fmt.Fprintf(ios.Out, "  %s  %s\n", cs.Cyan(fmt.Sprintf("%*d", width, t.turn)), command.Truncate(term.SanitizeLine(t.prompt), max(20, ios.TerminalWidth()-width-6)))
	}
	hint := fmt.Sprintf("[1-%d] ", last)
	if orAll {
		hint = fmt.Sprintf("[1-%d, enter for all] ", last)
	}
	for {
		a, err := term.PromptLine(ctx, ios, question+" "+hint)
		if err != nil {
			return 0, err
		}
		a = strings.TrimSpace(a)
		if a == "" && orAll {
			return 0, nil
		}
		n, err := strconv.Atoi(a)
		if err == nil && n >= 1 && n <= last {
			return n, nil
		}
		fmt.Fprintf(ios.Out, "Please give a number from 1 to %d.\n", last)
	}
}
