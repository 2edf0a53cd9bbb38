package loom

import (
	"context"
	"time"
)

// ProjectMove moves every session a user has in one project, live,
// archived and trashed, to another project: how a project that moved on
// disk, or came to be identified by its repository's remote, keeps its
// sessions.
type ProjectMove struct {
	UserID string
	// From is the id of the project the sessions leave.
	From string
	// To is the project they join.
	To Project
	// Cwd, when set, is the working directory every moved session gets.
	Cwd *string
	// KeepUpdatedAt leaves the sessions' updated times as they were, so
	// that lists keep their order and a project its current session.
	KeepUpdatedAt bool
	// At is the time a key of its own (CLIKeyAt) is made from for a
	// session whose command-line key the new project already has; zero
	// means each session's creation time.
	At time.Time
}

// Validate checks that m names a user and both projects.
func (m ProjectMove) Validate() error {
	switch {
	case m.UserID == "":
		return Errorf(EINVALID, "a project move needs its user")
	case m.From == "" || m.To.ID == "":
		return Errorf(EINVALID, "a project move needs the ids of both projects")
	}
	return nil
}

// ProjectMover is a Store that makes a ProjectMove in one transaction:
// every session moves, or, on an error or a crash, none. Both SQL
// engines are.
type ProjectMover interface {
	// MoveProject moves m.UserID's sessions of project m.From to m.To
	// and returns them as stored after it: the live ones (archived
	// included) newest first, then the trashed ones newest first; none
	// when the project has none. A command-line key made from the old
	// project's name (MovedKey) follows the new name; where a live
	// session of the new project has the key a moved session would
	// get, the moved one gets CLIKeyAt of the new name at m.At (its
	// creation time when zero), counting on by a millisecond until the
	// key is free. Any other key the new project has already is
	// ECONFLICT, and nothing moves.
	MoveProject(ctx context.Context, m ProjectMove) ([]*Session, error)
}

// MovedKey renames a command-line key made from the old project's name
// (cli:OLD or cli:OLD:SUFFIX) after the new project: ok is false for
// any other key, and when the names are the same.
func MovedKey(key, oldName, newName string) (string, bool) {
	if oldName == "" || oldName == newName {
		return "", false
	}
	return RenameCLIKey(key, oldName, newName)
}
