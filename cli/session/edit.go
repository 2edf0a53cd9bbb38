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
	f     *command.Factory
	Ref   string
	Title string
}

func newCmdSessionRename(f *command.Factory) *cobra.Command {
	opts := &RenameOptions{f: f}
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
			return renameRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func renameRun(ctx context.Context, opts *RenameOptions) error {
	f := opts.f
	st, s, err := f.StoreSession(ctx, opts.Ref)
	if err != nil {
		return err
	}
	old := s.Title
	s, err = st.UpdateSession(ctx, s.ID, loom.SessionUpdate{Title: &opts.Title})
	if err != nil {
		return err
	}
	if f.JSON() {
		return command.WriteJSON(f.IO.Out, s)
	}
	if f.IO.IsStdoutTTY() {
		cs := f.IO.ColorScheme()
		fmt.Fprintf(f.IO.Out, "%s Renamed %s from %q to %q\n", cs.Green("✓"), f.DisplayID(ctx, st, s.ID), old, s.Title)
	}
	return nil
}
