package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/paths"
)

// RenameOptions are the options of `loom session rename`.
type RenameOptions struct {
	f     *Factory
	Ref   string
	Title string
}

func newCmdSessionRename(f *Factory, runF func(*RenameOptions) error) *cobra.Command {
	opts := &RenameOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rename REF TITLE",
		Short: "Give a session a title",
		Long: `Give a session a title, which then works as a reference to it.
A session nobody named is titled after its first prompt.`,
		Example: `  loom session rename 0196a3b2 "flaky test hunt"
  loom session rename cli:api "API refactor"`,
		Args: argsBetween(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref, opts.Title = args[0], strings.TrimSpace(args[1])
			if opts.Title == "" {
				return usageErrorf("the title must not be empty")
			}
			if runF != nil {
				return runF(opts)
			}
			return renameRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func renameRun(ctx context.Context, opts *RenameOptions) error {
	f := opts.f
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	s, err := f.Resolve(ctx, st, opts.Ref)
	if err != nil {
		return err
	}
	old := s.Title
	s, err = st.UpdateSession(ctx, s.ID, loom.SessionUpdate{Title: &opts.Title})
	if err != nil {
		return err
	}
	if f.JSON() {
		return writeJSON(f.IO.Out, s)
	}
	if f.IO.IsStdoutTTY() {
		cs := f.IO.ColorScheme()
		fmt.Fprintf(f.IO.Out, "%s Renamed %s from %q to %q\n", cs.Green("✓"), displayID(f.IO, s.ID), old, s.Title)
	}
	return nil
}

// MoveOptions are the options of `loom session move`.
type MoveOptions struct {
	f   *Factory
	Ref string
	Dir string
}

func newCmdSessionMove(f *Factory, runF func(*MoveOptions) error) *cobra.Command {
	opts := &MoveOptions{f: f}
	cmd := &cobra.Command{
		Use:   "move REF [DIR]",
		Short: "Re-home a session to the project of a directory",
		Long: `Re-home a session to the project DIR belongs to (default: the working
directory), for a project that moved on disk or work that continues
elsewhere. A command-line key named after the old project (cli:NAME) is
renamed after the new one; if the new project already has a session with
that key, the moved session gets a key of its own (cli:NAME:UNIX-MS) so
the project's current session stays current.`,
		Example: `  cd ~/src/api-new && loom session move 0196a3b2
  loom session move "flaky test" ~/src/api`,
		Args: argsBetween(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if len(args) > 1 {
				opts.Dir = args[1]
			}
			if runF != nil {
				return runF(opts)
			}
			return moveRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func moveRun(ctx context.Context, opts *MoveOptions) error {
	f := opts.f
	dir := opts.Dir
	if dir == "" {
		wd, err := f.Cwd()
		if err != nil {
			return err
		}
		dir = wd
	} else if !filepath.IsAbs(dir) {
		wd, err := f.Cwd()
		if err != nil {
			return err
		}
		dir = filepath.Join(wd, dir)
	}
	project, err := paths.DetectProject(dir)
	if err != nil {
		return err
	}
	cwd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		cwd = dir
	}
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	s, err := f.Resolve(ctx, st, opts.Ref)
	if err != nil {
		return err
	}
	u := loom.SessionUpdate{Project: &project, Cwd: &cwd}
	if key, ok := movedKey(s.Key, s.Project.Name, project.Name); ok {
		u.Key = &key
	}
	moved, err := st.UpdateSession(ctx, s.ID, u)
	if loom.ErrorCode(err) == loom.ECONFLICT && strings.HasPrefix(s.Key, "cli:") {
		key := "cli:" + project.Name + ":" + strconv.FormatInt(f.now().UnixMilli(), 10)
		u.Key = &key
		moved, err = st.UpdateSession(ctx, s.ID, u)
	}
	if err != nil {
		return err
	}
	if f.JSON() {
		return writeJSON(f.IO.Out, moved)
	}
	if f.IO.IsStdoutTTY() {
		cs := f.IO.ColorScheme()
		fmt.Fprintf(f.IO.Out, "%s Moved %s to %s (%s)", cs.Green("✓"), displayID(f.IO, moved.ID), project.Name, project.Root)
		if moved.Key != s.Key {
			fmt.Fprintf(f.IO.Out, "; its key is now %s", moved.Key)
		}
		fmt.Fprintln(f.IO.Out)
	}
	return nil
}

// movedKey renames a command-line key made from the old project's name
// (cli:OLD or cli:OLD:SUFFIX) after the new project.
func movedKey(key, oldName, newName string) (string, bool) {
	if oldName == "" || oldName == newName {
		return "", false
	}
	prefix := "cli:" + oldName
	switch {
	case key == prefix:
		return "cli:" + newName, true
	case strings.HasPrefix(key, prefix+":"):
		return "cli:" + newName + key[len(prefix):], true
	}
	return "", false
}
