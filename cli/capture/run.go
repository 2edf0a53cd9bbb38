package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/capture"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/recall"
)

// RunOptions are the options of `loom capture run`.
type RunOptions struct {
	*Options
	// Rescan is how often every agent's files are imported again;
	// Interval how often the heartbeat is written.
	Rescan, Interval time.Duration
}

// newCmdRun builds loom capture run. runF, when not nil, is called with
// the options instead of capturing.
func newCmdRun(inv *command.Invocation, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{Options: NewOptions(inv)}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Capture every agent's sessions until stopped (what the service runs)",
		Long: `Import the sessions of every agent loom reads, then follow their files and
import each change as it is written (within a second or two), until
stopped (Ctrl+C, SIGTERM). Every agent's files are imported again every
--rescan, for a change a file notification missed (a network file
system, a directory made between two looks). The capture writes its
state (its pid, a heartbeat every --interval, when it last captured
each agent) where loom capture status and loom doctor read it. Where
another capture runs already, this one waits for it to end.

While it runs it also answers the agents' recall hooks (loom recall
--hook) from the store it holds open, so that a hook answers within its
budget on a busy machine (a Unix socket in loom's state directory, its
user's alone).

Killed at any moment (kill -9, a power cut), it loses nothing: an import
writes whole transactions, and what one had not written is read again
at the next start. loom capture install runs this as a service.`,
		Example: `  loom capture run
  loom capture run --rescan 5m
  loom --db ~/work/sessions.db capture run`,
		Args: command.NoArgs,
	}
	cmd.RunE = command.RunE(opts, func([]string) error {
		if cmd.Flags().Changed("rescan") && opts.Rescan < time.Second {
			return command.UsageErrorf("--rescan must be at least 1s")
		}
		if cmd.Flags().Changed("interval") && opts.Interval < 100*time.Millisecond {
			return command.UsageErrorf("--interval must be at least 100ms")
		}
		return nil
	}, runF, captureRun)
	cmd.Flags().DurationVar(&opts.Rescan, "rescan", 30*time.Second, "import every agent's files again this often, whatever the notifications said")
	cmd.Flags().DurationVar(&opts.Interval, "interval", capture.DefaultInterval, "write the heartbeat this often")
	return cmd
}

// targets are every agent with a location of its own.
func (opts *Options) targets() []importer.Target {
	var out []importer.Target
	home := opts.Home()
	for _, fm := range opts.Formats {
		if roots := fm.Roots(opts.Getenv, home); len(roots) > 0 {
			out = append(out, importer.Target{Format: fm, Roots: roots})
		}
	}
	return out
}

func captureRun(ctx context.Context, opts *RunOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	path, err := opts.statePath()
	if err != nil {
		return err
	}
	st, err := opts.CreateStore(ctx)
	if err != nil {
		return err
	}
	serveRecall(ctx, opts.Options, st, opts.IO.ErrOut)
	im := &importer.Importer{Store: st, UserID: opts.User(), Now: opts.Now, Price: pricing.Cost, Project: opts.ImportProject}
	targets := opts.targets()
	errOut := opts.IO.ErrOut
	stamp := func() string { return opts.Now().Local().Format("2006-01-02 15:04:05") }
	fmt.Fprintf(errOut, "%s capture: following %d agents; state in %s\n", stamp(), len(targets), path)
	err = capture.Run(ctx, im, targets, capture.Options{
		State: path, Interval: opts.Interval, Rescan: opts.Rescan, Version: opts.Version, Now: opts.Now,
		Waiting: func(pid int) {
			fmt.Fprintf(errOut, "%s capture: another capture runs (pid %d); waiting for it to end\n", stamp(), pid)
		},
		Report: func(rep *importer.Report) {
			opts.AdoptImported(ctx, st)
			for _, line := range reportLines(rep) {
				fmt.Fprintf(errOut, "%s capture: %s\n", stamp(), line)
			}
		},
	})
	if ctx.Err() != nil {
		fmt.Fprintf(errOut, "%s capture: stopped\n", stamp())
		return nil
	}
	return err
}

// serveRecall answers agents' recall hooks from st while the capture
// runs (see recall.Serve): a hook then neither opens the store nor
// compiles the secret rules itself. Where a warm recall a hook started
// (loom recall serve) answers already, the capture takes over once it
// has ended; where it cannot answer, the hooks recall in their own
// processes, as without a capture.
func serveRecall(ctx context.Context, opts *Options, st loom.Engine, errOut io.Writer) {
	if opts.DBURL == nil {
		return
	}
	store, err := opts.DBURL()
	if err != nil {
		return
	}
	d, err := opts.Dirs()
	if err != nil {
		return
	}
	stamp := func() string { return opts.Now().Local().Format("2006-01-02 15:04:05") }
	sock := recall.WarmSocket(d.State, store)
	answer := recall.Answerer(store, opts.Version, st, opts.Redact)
	_, err = recall.Serve(ctx, sock, answer)
	switch {
	case err == nil:
		slog.Debug("answering recall hooks", "socket", sock)
		return
	case !errors.Is(err, recall.ErrServing):
		fmt.Fprintf(errOut, "%s capture: recall hooks are not answered here: %v\n", stamp(), err)
		return
	}
	fmt.Fprintf(errOut, "%s capture: another loom answers recall hooks (pid %d); the capture answers them once it ends\n",
		stamp(), recall.Holder(sock))
	go func() {
		for recall.WaitFree(ctx, sock) == nil {
			_, err := recall.Serve(ctx, sock, answer)
			if errors.Is(err, recall.ErrServing) {
				// Another took it first.
				continue
			}
			if err != nil {
				fmt.Fprintf(errOut, "%s capture: recall hooks are not answered here: %v\n", stamp(), err)
			} else {
				fmt.Fprintf(errOut, "%s capture: answering recall hooks\n", stamp())
			}
			return
		}
	}()
}

// reportLines are what an import did, a line per agent that changed.
func reportLines(rep *importer.Report) []string {
	var out []string
	for _, t := range rep.Tools {
		var parts []string
		if t.SessionsNew > 0 {
			parts = append(parts, human.Plural(t.SessionsNew, "new session"))
		}
		if t.SessionsGrown > 0 {
			parts = append(parts, human.Plural(t.SessionsGrown, "session")+" grown")
		}
		if t.MessagesAdded > 0 {
			parts = append(parts, human.Plural(t.MessagesAdded, "message")+" added")
		}
		if t.ProblemCount > 0 {
			p := human.Plural(t.ProblemCount, "problem")
			if len(t.Problems) > 0 {
				p += " (" + t.Problems[0].String() + ")"
			}
			parts = append(parts, p)
		}
		if len(parts) > 0 {
			out = append(out, t.Tool+": "+strings.Join(parts, ", "))
		}
	}
	return out
}
