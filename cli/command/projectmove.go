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

// MoveProject makes move m in st: in one transaction where the store's
// engine can (its ProjectMover), else one session at a time (MoveSession),
// stopping at the first that cannot move. It returns the sessions as
// stored after the move, in the order ProjectMover.MoveProject gives.
func MoveProject(ctx context.Context, st loom.Engine, m loom.ProjectMove) ([]*loom.Session, error) {
	if pm := st.Services().ProjectMover; pm != nil {
		return pm.MoveProject(ctx, m)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	sessions, err := ProjectSessions(ctx, st, m.UserID, m.From)
	if err != nil {
		return nil, err
	}
	moved := make([]*loom.Session, 0, len(sessions))
	for _, s := range sessions {
		at := m.At
		if at.IsZero() {
			at = s.CreatedAt
		}
		u := loom.SessionUpdate{Project: &m.To, Cwd: m.Cwd, KeepUpdatedAt: m.KeepUpdatedAt}
		ms, err := MoveSession(ctx, st, s, u, at)
		if err != nil {
			return nil, fmt.Errorf("move %s: %w (moved %d of %d)", s.ID, err, len(moved), len(sessions))
		}
		moved = append(moved, ms)
	}
	return moved, nil
}

// ProjectSessions returns every session of a user's project, live and
// trashed, so that a moved project leaves nothing behind.
func ProjectSessions(ctx context.Context, st loom.Store, user, projectID string) ([]*loom.Session, error) {
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
