package session

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
)

// ArchiveOptions are the options of `loom session archive` and
// `unarchive`.
type ArchiveOptions struct {
	StoredSessions
	Refs    []string
	Archive bool
}

func newCmdSessionArchive(inv *command.Invocation, archive bool, runF func(*ArchiveOptions) error) *cobra.Command {
	opts := &ArchiveOptions{StoredSessions: newStoredSessions(inv), Archive: archive}
	cmd := &cobra.Command{
		Use:   "archive REF...",
		Short: "Hide sessions from lists, the picker and search, keeping them",
		Long: `Archive sessions: they leave session list, the picker and default
searches, and stay in the store, whole, for as long as you want — prune
never removes an archived session, only an explicit delete does.

They are still found by id, key or title (show, resume, export), listed
by 'loom session list --archived' and searched by 'loom search
--archived'. A new message in an archived session (resuming it and
talking) brings it back; so does 'loom session unarchive'.`,
		Example: `  loom session archive 0196a3b2 "old spike"
  loom session list --archived
  loom session unarchive 0196a3b2`,
		Args: command.ArgsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return archiveRun(cmd.Context(), opts)
		},
	}
	if !archive {
		cmd.Use = "unarchive REF..."
		cmd.Short = "Bring archived sessions back into lists, the picker and search"
		cmd.Long = `Unarchive sessions: they are listed and searched again, in their
place by last activity.`
		cmd.Example = `  loom session list --archived
  loom session unarchive 0196a3b2`
	}
	return cmd
}

func archiveRun(ctx context.Context, opts *ArchiveOptions) error {
	st, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	sessions, err := opts.resolveAll(ctx, st, opts.Refs)
	if err != nil {
		return err
	}
	out := make([]*loom.Session, 0, len(sessions))
	for _, s := range sessions {
		x, err := st.UpdateSession(ctx, s.ID, loom.SessionUpdate{Archived: &opts.Archive})
		if err != nil {
			return err
		}
		out = append(out, x)
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, out)
	}
	if opts.IO.IsStdoutTTY() {
		cs := opts.IO.ColorScheme()
		verb := "Archived"
		if !opts.Archive {
			verb = "Unarchived"
		}
		for _, s := range out {
			fmt.Fprintf(opts.IO.Out, "%s %s %s %s\n", cs.Green("✓"), verb, opts.DisplayID(ctx, st, s.ID), command.SessionLabel(s))
		}
	}
	return nil
}
