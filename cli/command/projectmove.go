package command

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// MoveSession re-homes s to the project u names (u.Project), with the
// rest of u, renaming a key made from the old project's name
// (loom.MovedKey); when the new project already has that key, s gets
// one of its own made from the time at.
func MoveSession(ctx context.Context, st loom.Store, s *loom.Session, u loom.SessionUpdate, at time.Time) (*loom.Session, error) {
	if key, ok := loom.MovedKey(s.Key, s.Project.Name, u.Project.Name); ok {
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

// movedProjectHint finds, for a project with no sessions, sessions of a
// project with the same name whose root no longer exists (the project
// moved on disk), and says how to bring them here. It is empty when there
// are none.
func movedProjectHint(ctx context.Context, user string, st loom.Store, project loom.Project) (string, error) {
	if project.Name == "" {
		return "", nil
	}
	same, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, ProjectName: project.Name, Limit: 1000, Archived: loom.WithArchived})
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
			human.Plural(counts[root], "session"), project.Name, verb, root, them, ShellQuote(root)))
	}
	return strings.Join(hints, "\n"), nil
}

// PrintMovedProjectHint prints movedProjectHint's advice, for user's
// sessions, on stderr.
func PrintMovedProjectHint(ctx context.Context, ios *term.IOStreams, user string, st loom.Store, project loom.Project) error {
	hint, err := movedProjectHint(ctx, user, st, project)
	if err != nil || hint == "" {
		return err
	}
	fmt.Fprintln(ios.ErrOut, term.Sanitize(hint))
	return nil
}

// ShellQuote quotes a path for a command line a user copies, when it
// needs quoting.
func ShellQuote(s string) string { return human.ShellQuote(s) }

// SessionLabel names a session for messages: its title, else its key.
func SessionLabel(s *loom.Session) string {
	switch {
	case s.Title != "":
		return fmt.Sprintf("%q", s.Title)
	case s.Key != "":
		return "(" + s.Key + ")"
	}
	return "(untitled)"
}
