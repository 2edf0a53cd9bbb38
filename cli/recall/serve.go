package recall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
	"github.com/loomhq/loom/secrets"
)

// DefaultWarmIdle is how long a warm recall a hook started waits for a
// question before it ends.
const DefaultWarmIdle = 30 * time.Minute

// warmCheck is how often a warm recall a hook started looks whether its
// store and its socket are still those it opened.
const warmCheck = time.Minute

// ServeOptions are the options of `loom recall serve`.
type ServeOptions struct {
	// ReadStore opens the store to read.
	ReadStore func(context.Context) (loom.Engine, error)
	// StoreMissing reports whether the store ReadStore opened does not
	// exist yet (and reads as empty).
	StoreMissing func() bool
	// Store is the URL of the store ReadStore opens.
	Store func() (string, error)
	// StoreFile is the file that store keeps, "" for a server's: when
	// it becomes another file (moved, made again), the warm recall
	// ends.
	StoreFile func() string
	// Dirs are loom's directories: the socket is in the state one.
	Dirs func() (paths.Dirs, error)
	// Redact is the detector of what is recalled ([mcp] redact).
	Redact  func() *secrets.Detector
	Version string

	// Idle is how long it waits for a question before it ends.
	Idle time.Duration
}

// newCmdServe builds loom recall serve, which a hook starts (hidden: no
// one needs to run it by hand).
func newCmdServe(inv *command.Invocation, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{ReadStore: inv.ReadStore, StoreMissing: inv.StoreMissing, Store: inv.DBURL, StoreFile: inv.StoreFile, Dirs: inv.Dirs,
		Redact: command.ConfigLoader(inv.Config).MCPRedact, Version: inv.Version}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Answer the recall hooks warm until none asks for a while (a hook starts it)",
		Long: `Answer the agents' recall hooks (loom recall --hook) from the store held
open and the secret rules compiled, over a Unix socket in loom's state
directory, its user's alone, until no hook has asked for --idle (30
minutes), the store is another file than the one it opened, a hook of
another version of loom asks, or it is stopped (SIGTERM, Ctrl+C). A
hook that finds none answering starts it in the background, unless
[recall] warm = false; where one answers already (this one's, or loom
capture run's), it ends at once.`,
		Example: `  # what a hook runs in the background; by hand, to end after 10 idle minutes:
  loom recall serve --idle 10m`,
		Hidden: true,
		Args:   command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Idle <= 0 {
				return command.UsageErrorf("--idle must be more than 0")
			}
			if runF != nil {
				return runF(opts)
			}
			return serveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Idle, "idle", DefaultWarmIdle, "end after this long without a question")
	return cmd
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	store, err := opts.Store()
	if err != nil {
		return err
	}
	d, err := opts.Dirs()
	if err != nil {
		return err
	}
	sock := recall.WarmSocket(d.State, store)
	if recall.Answering(sock) {
		return nil
	}
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return err
	}
	if opts.StoreMissing() {
		// No store yet: nothing to answer, and the hooks find that at
		// once by themselves.
		return nil
	}
	// The file opened, to tell when the store is another (moved, made
	// again): a SQLite store's alone.
	var file os.FileInfo
	path := ""
	if opts.StoreFile != nil {
		path = opts.StoreFile()
	}
	if path != "" {
		file, _ = os.Stat(path)
	}
	moved := func() bool {
		if file == nil {
			return false
		}
		now, err := os.Stat(path)
		return err != nil || !os.SameFile(file, now)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(opts.Idle, func() { cancel(errors.New("no question for " + opts.Idle.String())) })
	defer idle.Stop()
	answer := recall.Answerer(store, opts.Version, st, opts.Redact)
	done, err := recall.Serve(ctx, sock, func(qctx context.Context, q recall.Question) recall.Answer {
		idle.Reset(opts.Idle)
		if moved() {
			cancel(errors.New("the store is another file"))
			return recall.Answer{Error: recall.ErrOtherStore.Error()}
		}
		a := answer(qctx, q)
		if a.Error == recall.ErrOtherStore.Error() {
			// Asked by another version of loom (or of another
			// store): the hook starts one of its own once this one
			// has ended.
			cancel(errors.New("asked by another loom"))
		}
		return a
	})
	if errors.Is(err, recall.ErrServing) {
		return nil
	}
	if err != nil {
		return err
	}
	tick := time.NewTicker(warmCheck)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			if _, err := os.Stat(sock); err != nil || moved() {
				cancel(fmt.Errorf("the socket or the store is gone"))
			}
		}
	}
	<-done
	// The store is closed as the command ends.
	slog.Debug("warm recall ended", "socket", sock, "why", context.Cause(ctx))
	return nil
}
