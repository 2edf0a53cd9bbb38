package session

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
)

// MoveOptions are the options of `loom session move`.
type MoveOptions struct {
	StoredSessions
	// AbsPath makes a directory absolute against the working directory.
	AbsPath func(dir string) (string, error)
	Now     func() time.Time
	User    string

	Ref string
	// From moves every session of the project rooted there instead of
	// the one Ref names.
	From string
	Dir  string
}

func newCmdSessionMove(inv *command.Invocation, runF func(*MoveOptions) error) *cobra.Command {
	opts := &MoveOptions{StoredSessions: newStoredSessions(inv), AbsPath: inv.AbsPath, Now: inv.TimeNow}
	cmd := &cobra.Command{
		Use:   "move {REF | --from OLDDIR} [DIR]",
		Short: "Re-home sessions to the project of a directory",
		Long: `Re-home a session to the project DIR belongs to (default: the working
directory), for a project that moved on disk or work that continues
elsewhere. --from OLDDIR moves every session of the project that was
rooted at OLDDIR (which need not exist any more), trashed ones included.

A command-line key named after the old project (cli:NAME) is renamed
after the new one; if the new project already has a session with that
key, the moved session gets a key of its own (cli:NAME:UNIX-MS) so the
project's current session stays current.`,
		Example: `  cd ~/src/api-new && loom session move 0196a3b2
  loom session move "flaky test" ~/src/api
  cd ~/src/api-new && loom session move --from ~/old/api`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.From != "" {
				return command.ArgsBetween(0, 1)(cmd, args)
			}
			return command.ArgsBetween(1, 2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.From == "" {
				opts.Ref, args = args[0], args[1:]
			}
			if len(args) > 0 {
				opts.Dir = args[0]
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return moveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "move every session of the project rooted at `OLDDIR`")
	return cmd
}

func moveRun(ctx context.Context, opts *MoveOptions) error {
	dir, err := opts.AbsPath(opts.Dir)
	if err != nil {
		return err
	}
	project, err := paths.DetectProject(dir)
	if err != nil {
		return err
	}
	cwd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		cwd = dir
	}
	st, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	var before *loom.Session
	var moved []*loom.Session
	var from string
	if opts.From == "" {
		if before, err = opts.Resolve(ctx, st, opts.Ref); err != nil {
			return err
		}
		m, err := command.MoveSession(ctx, st, before, loom.SessionUpdate{Project: &project, Cwd: &cwd}, opts.Now())
		if err != nil {
			return fmt.Errorf("move %s: %w (moved 0 of 1)", before.ID, err)
		}
		moved = append(moved, m)
	} else {
		if from, err = opts.AbsPath(opts.From); err != nil {
			return err
		}
		m := loom.ProjectMove{UserID: opts.User, From: paths.ProjectID(from), To: project, Cwd: &cwd, At: opts.Now()}
		if moved, err = st.MoveProject(ctx, m); err != nil {
			return err
		}
		if len(moved) == 0 {
			return loom.Errorf(loom.ENOTFOUND, "no sessions belong to a project rooted at %s", from)
		}
	}
	if opts.JSON {
		if opts.From == "" {
			return command.WriteJSON(opts.IO.Out, moved[0])
		}
		return command.WriteJSON(opts.IO.Out, moved)
	}
	if !opts.IO.IsStdoutTTY() {
		return nil
	}
	cs := opts.IO.ColorScheme()
	if opts.From != "" {
		fmt.Fprintf(opts.IO.Out, "%s Moved %s from %s to %s (%s)\n", cs.Green("✓"), human.Plural(len(moved), "session"), term.SanitizeLine(from), term.SanitizeLine(project.Name), term.SanitizeLine(project.Root))
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "%s Moved %s to %s (%s)", cs.Green("✓"), opts.DisplayID(ctx, st, moved[0].ID), term.SanitizeLine(project.Name), term.SanitizeLine(project.Root))
	if moved[0].Key != before.Key {
		fmt.Fprintf(opts.IO.Out, "; its key is now %s", term.SanitizeLine(moved[0].Key))
	}
	fmt.Fprintln(opts.IO.Out)
	return nil
}
