package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/session"
	"github.com/loomhq/loom/cli/term"
)

// maxReplayWait caps one pause of a replay: a session left overnight
// should not make the replay wait overnight too.
const maxReplayWait = 5 * time.Second

// ReplayOptions are the options of `loom replay`.
type ReplayOptions struct {
	IO *term.IOStreams
	// ReadSession opens the store to read the session ref names, and
	// finds it.
	ReadSession func(ctx context.Context, ref string) (loom.Engine, *loom.Session, error)
	Now         func() time.Time

	Ref          string
	Speed        float64
	ShowThinking bool
	// Sleep waits for d or until ctx ends; tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// newCmdReplay builds loom replay. runF, when not nil, is called with
// the options instead of running the command (for tests).
func newCmdReplay(inv *command.Invocation, runF func(*ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{
		IO:          inv.IO,
		ReadSession: inv.ReadSession,
		Now:         inv.TimeNow,
		Sleep:       sleepContext,
	}
	cmd := &cobra.Command{
		Use:   "replay REF",
		Short: "Re-render a session with its original timing",
		Long: `Print a session's messages one by one, pausing between them as long as
the original conversation did, divided by --speed (default 2: twice as
fast; 0: no pauses). No pause is longer than 5 seconds.`,
		Example: `  loom replay 0196a3b2
  loom replay "flaky test" --speed 10
  loom replay cli:api --speed 0 --show-thinking`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if opts.Speed < 0 {
				return command.UsageErrorf("--speed must be 0 (no pauses) or more")
			}
			if runF != nil {
				return runF(opts)
			}
			return replayRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().Float64Var(&opts.Speed, "speed", 2, "how many times faster than the original (0: no pauses)")
	cmd.Flags().BoolVar(&opts.ShowThinking, "show-thinking", false, "show reasoning")
	return cmd
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// replayWait is the pause before a message created gap after the one
// before it.
func replayWait(gap time.Duration, speed float64) time.Duration {
	if speed == 0 || gap <= 0 {
		return 0
	}
	return min(time.Duration(float64(gap)/speed), maxReplayWait)
}

func replayRun(ctx context.Context, opts *ReplayOptions) error {
	st, s, err := opts.ReadSession(ctx, opts.Ref)
	if err != nil {
		return err
	}
	ios := opts.IO
	session.WriteHeader(ios, ios.Out, s)
	ios.Out.Write([]byte("\n"))
	r := command.NewMessageRenderer(ios, opts.Now(), opts.ShowThinking)
	sleep := opts.Sleep
	if sleep == nil {
		sleep = sleepContext
	}
	// Read a page at a time so that replaying a long session needs no
	// more memory than a short one.
	const page = 200
	var prev time.Time
	var after int64
	for {
		// Seq runs without gaps, so a seq range is a page in order.
		msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{After: after, Before: after + page + 1})
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return nil
		}
		for _, m := range msgs {
			if !prev.IsZero() {
				if d := replayWait(m.CreatedAt.Sub(prev), opts.Speed); d > 0 {
					if err := sleep(ctx, d); err != nil {
						return err
					}
				}
			}
			prev = m.CreatedAt
			if err := r.Render(ios.Out, m); err != nil {
				return err
			}
		}
		after = msgs[len(msgs)-1].Seq
	}
}
