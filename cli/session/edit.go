package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
)

// RenameOptions are the options of `loom session rename`.
type RenameOptions struct {
	OneSession
	Title string
}

func newCmdSessionRename(inv *command.Invocation, runF func(*RenameOptions) error) *cobra.Command {
	opts := &RenameOptions{OneSession: newOneSession(inv)}
	cmd := &cobra.Command{
		Use:   "rename REF TITLE",
		Short: "Give a session a title",
		Long: `Give a session a title, which then works as a reference to it.
A session nobody named is titled after its first prompt.`,
		Example: `  loom session rename 0196a3b2 "flaky test hunt"
  loom session rename cli:api "API refactor"`,
		Args: command.ArgsBetween(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref, opts.Title = args[0], strings.TrimSpace(args[1])
			if opts.Title == "" {
				return command.UsageErrorf("the title must not be empty")
			}
			if err := loom.ValidTitle(opts.Title); err != nil {
				return command.UsageErrorf("%s", loom.ErrorMessage(err))
			}
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return renameRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func renameRun(ctx context.Context, opts *RenameOptions) error {
	st, s, err := opts.StoreSession(ctx, opts.Ref)
	if err != nil {
		return err
	}
	old := s.Title
	s, err = st.UpdateSession(ctx, s.ID, loom.SessionUpdate{Title: &opts.Title})
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, s)
	}
	if opts.IO.IsStdoutTTY() {
		cs := opts.IO.ColorScheme()
		fmt.Fprintf(opts.IO.Out, "%s Renamed %s from %q to %q\n", cs.Green("✓"), opts.DisplayID(ctx, st, s.ID), old, s.Title)
	}
	return nil
}
