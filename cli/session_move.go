package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
)

// MoveOptions are the options of `loom session move`.
type MoveOptions struct {
	f   *Factory
	Ref string
	// From moves every session of the project rooted there instead of
	// the one Ref names.
	From string
	Dir  string
}

func newCmdSessionMove(f *Factory) *cobra.Command {
	opts := &MoveOptions{f: f}
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
				return argsBetween(0, 1)(cmd, args)
			}
			return argsBetween(1, 2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.From == "" {
				opts.Ref, args = args[0], args[1:]
			}
			if len(args) > 0 {
				opts.Dir = args[0]
			}
			return moveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "move every session of the project rooted at `OLDDIR`")
	return cmd
}

func moveRun(ctx context.Context, opts *MoveOptions) error {
	f := opts.f
	dir, err := f.absPath(opts.Dir)
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
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	var sessions []*loom.Session
	var from string
	if opts.From == "" {
		s, err := f.Resolve(ctx, st, opts.Ref)
		if err != nil {
			return err
		}
		sessions = append(sessions, s)
	} else {
		if from, err = f.absPath(opts.From); err != nil {
			return err
		}
		if sessions, err = projectSessions(ctx, st, f.User(), paths.ProjectID(from)); err != nil {
			return err
		}
		if len(sessions) == 0 {
			return loom.Errorf(loom.ENOTFOUND, "no sessions belong to a project rooted at %s", from)
		}
	}
	moved := make([]*loom.Session, 0, len(sessions))
	for _, s := range sessions {
		m, err := moveSession(ctx, st, s, loom.SessionUpdate{Project: &project, Cwd: &cwd}, f.now())
		if err != nil {
			return fmt.Errorf("move %s: %w (moved %d of %d)", s.ID, err, len(moved), len(sessions))
		}
		moved = append(moved, m)
	}
	if f.JSON() {
		if opts.From == "" {
			return writeJSON(f.IO.Out, moved[0])
		}
		return writeJSON(f.IO.Out, moved)
	}
	if !f.IO.IsStdoutTTY() {
		return nil
	}
	cs := f.IO.ColorScheme()
	if opts.From != "" {
		fmt.Fprintf(f.IO.Out, "%s Moved %s from %s to %s (%s)\n", cs.Green("✓"), human.Plural(len(moved), "session"), term.SanitizeLine(from), term.SanitizeLine(project.Name), term.SanitizeLine(project.Root))
		return nil
	}
	fmt.Fprintf(f.IO.Out, "%s Moved %s to %s (%s)", cs.Green("✓"), term.DisplayID(f.IO, moved[0].ID), term.SanitizeLine(project.Name), term.SanitizeLine(project.Root))
	if moved[0].Key != sessions[0].Key {
		fmt.Fprintf(f.IO.Out, "; its key is now %s", term.SanitizeLine(moved[0].Key))
	}
	fmt.Fprintln(f.IO.Out)
	return nil
}

// absPath makes dir absolute against the working directory; empty is the
// working directory itself.
func (f *Factory) absPath(dir string) (string, error) {
	if dir != "" && filepath.IsAbs(dir) {
		return filepath.Clean(dir), nil
	}
	wd, err := f.Cwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, dir), nil
}

// projectSessions returns every session of a user's project, live and
// trashed, so that a moved project leaves nothing behind.
func projectSessions(ctx context.Context, st loom.Store, user, projectID string) ([]*loom.Session, error) {
	live, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, ProjectID: projectID, Archived: loom.WithArchived})
	if err != nil {
		return nil, err
	}
	trashed, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, ProjectID: projectID, Deleted: true, Archived: loom.WithArchived})
	if err != nil {
		return nil, err
	}
	return append(live, trashed...), nil
}

// moveSession re-homes s to the project u names (u.Project), with the
// rest of u, renaming a key made from the old project's name; when the
// new project already has that key, s gets one of its own made from the
// time at.
func moveSession(ctx context.Context, st loom.Store, s *loom.Session, u loom.SessionUpdate, at time.Time) (*loom.Session, error) {
	if key, ok := movedKey(s.Key, s.Project.Name, u.Project.Name); ok {
		u.Key = &key
	}
	moved, err := st.UpdateSession(ctx, s.ID, u)
	// Keys made from the clock can meet when many sessions move within
	// one millisecond: count on until one is free.
	for t := at; loom.ErrorCode(err) == loom.ECONFLICT && loom.IsCLIKey(s.Key); t = t.Add(time.Millisecond) {
		key := loom.CLIKeyAt(u.Project.Name, t)
		u.Key = &key
		moved, err = st.UpdateSession(ctx, s.ID, u)
	}
	return moved, err
}

// movedKey renames a command-line key made from the old project's name
// (cli:OLD or cli:OLD:SUFFIX) after the new project.
func movedKey(key, oldName, newName string) (string, bool) {
	if oldName == "" || oldName == newName {
		return "", false
	}
	return loom.RenameCLIKey(key, oldName, newName)
}

// movedProjectHint finds, for a project with no sessions, sessions of a
// project with the same name whose root no longer exists (the project
// moved on disk), and says how to bring them here. It is empty when there
// are none.
func movedProjectHint(ctx context.Context, f *Factory, st loom.Store, project loom.Project) (string, error) {
	if project.Name == "" {
		return "", nil
	}
	same, err := st.Sessions(ctx, loom.SessionFilter{UserID: f.User(), ProjectName: project.Name, Limit: 1000, Archived: loom.WithArchived})
	if err != nil {
		return "", err
	}
	counts := map[string]int{}
	var roots []string
	for _, s := range same {
		// A clone of the project's repository elsewhere (on another
		// machine) is this project, wherever its root was.
		root := s.Project.Root
		if root == "" || root == project.Root || s.Project.ID == project.ID {
			continue
		}
		if counts[root] == 0 {
			roots = append(roots, root)
		}
		counts[root]++
	}
	var hints []string
	for _, root := range roots {
		if _, err := os.Stat(root); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		verb, them := "belong", "them"
		if counts[root] == 1 {
			verb, them = "belongs", "it"
		}
		hints = append(hints, fmt.Sprintf("%s of %s %s to %s, which no longer exists; move %s here with: loom session move --from %s",
			human.Plural(counts[root], "session"), project.Name, verb, root, them, shellQuote(root)))
	}
	return strings.Join(hints, "\n"), nil
}

// printMovedProjectHint prints movedProjectHint's advice on stderr.
func (f *Factory) printMovedProjectHint(ctx context.Context, st loom.Store, project loom.Project) error {
	hint, err := movedProjectHint(ctx, f, st, project)
	if err != nil || hint == "" {
		return err
	}
	fmt.Fprintln(f.IO.ErrOut, term.Sanitize(hint))
	return nil
}

// shellQuote quotes a path for a command line a user copies, when it
// needs quoting.
func shellQuote(s string) string { return human.ShellQuote(s) }
