package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// DeleteOptions are the options of `loom session delete`.
type DeleteOptions struct {
	StoredSessions
	Refs  []string
	Yes   bool
	Purge bool
	Force bool
}

func newCmdSessionDelete(inv *command.Invocation, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{StoredSessions: newStoredSessions(inv)}
	cmd := &cobra.Command{
		Use:     "delete REF...",
		Aliases: []string{"rm"},
		Short:   "Move sessions to the trash, or remove them for good",
		Long: fmt.Sprintf(`Move sessions, with their sub-agent sessions, to the trash, where they
stay restorable for %d days (loom session restore). --purge removes them
and their messages at once.

On a terminal it asks first; elsewhere --yes is required. Every REF is
resolved before anything is deleted. A session that another live process
is writing (a chat, a run, a server turn) is not deleted: the command
fails naming that process (exit 5) unless --force, and then that
process's next write fails instead.

--json prints what was deleted: {"purged": …, "deleted": [sessions]},
each session followed by the sub-agent sessions that went with it.`, int(loom.TrashTTL/(24*time.Hour))),
		Example: `  loom session delete 0196a3b2
  loom session delete "old experiment" 0196f00d --yes
  loom session delete 0196a3b2 --purge --yes
  loom session delete 0196a3b2 --yes --force --json`,
		Args: command.ArgsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			if !opts.Yes && !inv.IO.CanPrompt() {
				return command.UsageErrorf("--yes is required to delete when not on a terminal")
			}
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return deleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&opts.Purge, "purge", false, "remove for good instead of moving to the trash")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "delete even a session another running process is writing")
	return cmd
}

// DeleteReport is the JSON shape of what delete did.
type DeleteReport struct {
	Purged  bool            `json:"purged"`
	Deleted []*loom.Session `json:"deleted"`
}

// lockedForDelete is the ELOCKED error of a session another process
// holds, with the way past it.
func lockedForDelete(err error) error {
	var le *loom.Error
	if errors.As(err, &le) && le.Code == loom.ELOCKED {
		return &loom.Error{Code: le.Code, Message: le.Message + "; --force deletes it anyway", Holder: le.Holder}
	}
	return err
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	st, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	named, err := opts.resolveAll(ctx, st, opts.Refs)
	if err != nil {
		return err
	}
	// A session named twice is deleted once.
	var targets []*loom.Session
	seen := map[string]bool{}
	for _, s := range named {
		if !seen[s.ID] {
			seen[s.ID] = true
			targets = append(targets, s)
		}
	}
	// The store refuses each locked session in its own transaction; this
	// refuses before the first is deleted, as far as it can see.
	if !opts.Force {
		// This process holds no lock: any holder is another one.
		if err := loom.CheckNotHeld(targets, ""); err != nil {
			return lockedForDelete(err)
		}
	}
	ios := opts.IO
	cs := ios.ColorScheme()
	if !opts.Yes {
		for _, s := range targets {
			// Whole words on a terminal: the full id, which a
			// confirmation shows so that it can be checked, takes
			// half a line of 80 columns.
			fmt.Fprintln(ios.Out, ios.WrapOut(fmt.Sprintf("  %s  %s  %s", cs.Cyan(s.ID), command.SessionLabel(s), cs.Gray(human.Plural(s.MessageCount, "message"))), 4))
		}
		verb := "Move %s to the trash?"
		if opts.Purge {
			verb = "Delete %s for good?"
		}
		ok, err := term.Confirm(ctx, ios, fmt.Sprintf(verb, human.Plural(len(targets), "session")))
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(ios.ErrOut, "Nothing deleted.")
			return &command.SilentError{Code: command.ExitError}
		}
	}
	rep := DeleteReport{Purged: opts.Purge, Deleted: []*loom.Session{}}
	for _, s := range targets {
		// The id as shown is the prefix that finds the session while it
		// is there to find.
		shown := s.ID
		if ios.IsStdoutTTY() && !opts.JSON {
			shown = opts.DisplayID(ctx, st, s.ID)
		}
		gone, err := st.Delete(ctx, s.ID, loom.DeleteOptions{Purge: opts.Purge, Force: opts.Force})
		if err != nil {
			if opts.JSON && len(rep.Deleted) > 0 {
				// What was deleted before the failure still counts.
				command.WriteJSON(ios.Out, rep)
			}
			return lockedForDelete(err)
		}
		rep.Deleted = append(rep.Deleted, gone...)
		if opts.Purge {
			if err := dropOriginals(ctx, st, s.UserID, gone); err != nil {
				return err
			}
		}
		if opts.JSON {
			continue
		}
		if ios.IsStdoutTTY() {
			if opts.Purge {
				fmt.Fprintf(ios.Out, "%s Deleted %s %s for good\n", cs.Red("✓"), shown, command.SessionLabel(s))
			} else {
				fmt.Fprintf(ios.Out, "%s Moved %s %s to the trash; loom session restore %s brings it back\n", cs.Green("✓"), shown, command.SessionLabel(s), s.ID)
			}
		}
	}
	if opts.JSON {
		return command.WriteJSON(ios.Out, rep)
	}
	return nil
}

// dropOriginals removes the kept originals (docs/durability.md) of the
// sessions gone, purged, and of any purged before from the trash.
func dropOriginals(ctx context.Context, st loom.Engine, user string, gone []*loom.Session) error {
	ids := make([]string, len(gone))
	for i, s := range gone {
		ids[i] = s.ID
	}
	_, err := st.DeleteOriginals(ctx, user, ids)
	return err
}

// RestoreOptions are the options of `loom session restore`.
type RestoreOptions struct {
	IO *term.IOStreams
	// Store opens the store to change sessions in it.
	Store func(context.Context) (loom.Engine, error)
	// ResolveIn finds the session a reference names, among those in the
	// trash when deleted is set.
	ResolveIn func(ctx context.Context, st loom.Reader, ref string, deleted bool) (*loom.Session, error)
	// DisplayID is an id as a terminal shows it.
	DisplayID func(ctx context.Context, st loom.Store, id string) string
	JSON      bool

	Ref string
}

func newCmdSessionRestore(inv *command.Invocation, runF func(*RestoreOptions) error) *cobra.Command {
	opts := &RestoreOptions{
		IO:        inv.IO,
		Store:     inv.Store,
		ResolveIn: inv.Scope().ResolveIn,
		DisplayID: inv.Scope().DisplayID,
	}
	cmd := &cobra.Command{
		Use:   "restore REF",
		Short: "Bring a session back from the trash",
		Long: `Bring a deleted or pruned session, with its sub-agent sessions, back
from the trash. REF is resolved among trashed sessions.`,
		Example: `  loom session list --deleted
  loom session restore 0196a3b2
  loom session restore "flaky test"`,
		Args: command.ArgsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return command.UsageErrorf("name the session to bring back: loom session restore REF (loom session list --deleted lists the trash)")
			}
			opts.Ref = args[0]
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return restoreRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func restoreRun(ctx context.Context, opts *RestoreOptions) error {
	st, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	s, err := opts.ResolveIn(ctx, st, opts.Ref, true)
	if loom.ErrorCode(err) == loom.ENOTFOUND {
		return loom.Errorf(loom.ENOTFOUND, "no session in the trash matches %q", opts.Ref)
	}
	if err != nil {
		return err
	}
	if err := st.Restore(ctx, s.ID); err != nil {
		return err
	}
	if opts.JSON {
		s, err := st.Session(ctx, s.ID)
		if err != nil {
			return err
		}
		return command.WriteJSON(opts.IO.Out, s)
	}
	if opts.IO.IsStdoutTTY() {
		fmt.Fprintf(opts.IO.Out, "%s Restored %s %s\n", opts.IO.ColorScheme().Green("✓"), opts.DisplayID(ctx, st, s.ID), command.SessionLabel(s))
	}
	return nil
}

// PruneOptions are the options of `loom session prune`.
type PruneOptions struct {
	IO *term.IOStreams
	// Store opens the store to change sessions in it.
	Store func(context.Context) (loom.Engine, error)
	// Project is the working directory's project.
	Project func() (loom.Project, error)
	Now     func() time.Time
	User    string
	JSON    bool

	OlderThan time.Duration
	// Age is --older-than as the user wrote it, for messages.
	Age         string
	DryRun      bool
	Yes         bool
	AllProjects bool
}

func newCmdSessionPrune(inv *command.Invocation, runF func(*PruneOptions) error) *cobra.Command {
	opts := &PruneOptions{
		IO:      inv.IO,
		Store:   inv.Store,
		Project: inv.Project,
		Now:     inv.TimeNow,
	}
	var older string
	cmd := &cobra.Command{
		Use:   "prune --older-than DUR",
		Short: "Move sessions not used for a while to the trash",
		Long: `Move this project's sessions not updated for DUR to the trash (with
--all-projects, every project's and surface's). DUR is a number and a
unit: s, m, h, d (days) or w (weeks), e.g. 30d, 12h, 2w, 1d12h.

Nothing is ever pruned automatically. --dry-run lists what would go;
--older-than 0s selects every session.
Sessions another process is writing are skipped. Pruned sessions stay
restorable from the trash like deleted ones.`,
		Example: `  loom session prune --older-than 30d --dry-run
  loom session prune --older-than 0s --dry-run --all-projects
  loom session prune --older-than 2w --yes
  loom session prune --older-than 90d --all-projects`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if older == "" {
				return command.UsageErrorf("--older-than is required, e.g. --older-than 30d")
			}
			d, err := human.ParseAge(older)
			if err != nil {
				return command.UsageErrorf("--older-than: %v", err)
			}
			opts.OlderThan, opts.Age = d, older
			if !opts.Yes && !opts.DryRun && !inv.IO.CanPrompt() {
				return command.UsageErrorf("--yes (or --dry-run) is required to prune when not on a terminal")
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return pruneRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&older, "older-than", "", "prune sessions not updated for this long (30d, 12h, 2w)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "only list what would be pruned")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVarP(&opts.AllProjects, "all-projects", "a", false, "prune every project's sessions, not only this one's")
	return cmd
}

// PruneReport is the JSON shape of prune's outcome.
type PruneReport struct {
	DryRun  bool            `json:"dry_run"`
	Removed []*loom.Session `json:"removed"`
	Skipped []*loom.Session `json:"skipped"`
}

func pruneRun(ctx context.Context, opts *PruneOptions) error {
	st, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	po := loom.PruneOptions{UserID: opts.User, OlderThan: opts.OlderThan, DryRun: true}
	if !opts.AllProjects {
		p, err := opts.Project()
		if err != nil {
			return err
		}
		po.ProjectID = p.ID
	}
	preview, err := st.Prune(ctx, po)
	if err != nil {
		return err
	}
	ios := opts.IO
	res := preview
	if !opts.DryRun && len(preview.Removed) > 0 {
		if !opts.Yes {
			printSessionRows(ios, preview.Removed, opts.Now())
			ok, err := term.Confirm(ctx, ios, fmt.Sprintf("Move %s to the trash?", human.Plural(len(preview.Removed), "session")))
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintln(ios.ErrOut, "Nothing pruned.")
				return &command.SilentError{Code: command.ExitError}
			}
		}
		po.DryRun = false
		if res, err = st.Prune(ctx, po); err != nil {
			return err
		}
	}
	if opts.JSON {
		rep := PruneReport{DryRun: opts.DryRun, Removed: res.Removed, Skipped: res.Skipped}
		if rep.Removed == nil {
			rep.Removed = []*loom.Session{}
		}
		if rep.Skipped == nil {
			rep.Skipped = []*loom.Session{}
		}
		return command.WriteJSON(ios.Out, rep)
	}
	cs := ios.ColorScheme()
	switch {
	case len(res.Removed) == 0:
		fmt.Fprintf(ios.ErrOut, "No sessions older than %s to prune.\n", opts.Age)
	case opts.DryRun:
		if ios.IsStdoutTTY() {
			fmt.Fprintf(ios.Out, "Would move %s to the trash:\n", human.Plural(len(res.Removed), "session"))
		}
		printSessionRows(ios, res.Removed, opts.Now())
	default:
		if ios.IsStdoutTTY() {
			fmt.Fprintf(ios.Out, "%s Moved %s to the trash (restorable for %d days with loom session restore)\n",
				cs.Green("✓"), human.Plural(len(res.Removed), "session"), int(loom.TrashTTL/(24*time.Hour)))
		} else {
			for _, s := range res.Removed {
				fmt.Fprintln(ios.Out, s.ID)
			}
		}
	}
	for _, s := range res.Skipped {
		who := ""
		if s.Lock != nil {
			who = fmt.Sprintf(" (in use by process %d on %s)", s.Lock.PID, s.Lock.Host)
		}
		fmt.Fprintf(ios.ErrOut, "Skipped %s %s%s\n", s.ID, command.SessionLabel(s), who)
	}
	return nil
}

// printSessionRows prints sessions as a short table: id, title, updated,
// messages.
func printSessionRows(ios *term.IOStreams, sessions []*loom.Session, now time.Time) {
	cs := ios.ColorScheme()
	tp := term.NewTable(ios)
	tp.Flex(1)
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
	}
	idLen := term.AbbrevLen(ids)
	for _, s := range sessions {
		tp.AddField(term.AbbrevID(ios, s.ID, idLen), cs.Cyan)
		tp.AddField(strings.TrimSpace(s.Title+" "+paren(s.Key)), nil)
		tp.AddField(term.DisplayTime(ios, s.UpdatedAt, now), cs.Gray)
		tp.AddField(human.Plural(s.MessageCount, "message"), nil)
		tp.EndRow()
	}
	_ = tp.Render()
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}
