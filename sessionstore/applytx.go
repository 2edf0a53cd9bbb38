package sessionstore

import (
	"time"

	"github.com/loomhq/loom"
)

// State names what sync keeps of a session beside its row.
type State int

const (
	// metaState is the session's merged metadata (Meta).
	metaState State = iota
	// LifeState is its trash state and work (Life).
	LifeState
	// PurgeKeptState is a session this store purged itself, as it was,
	// until the sync that sends the purge has pulled (PurgeKept).
	PurgeKeptState
)

// StateRow is one session's state as kept.
type StateRow struct {
	ID, Value string
}

// ForkKind is the kind of a fork sync keeps where it splits.
type ForkKind string

// The kinds of fork: one made by `loom session fork`, the one a rewind
// moves a session's later messages to, and a conflict fork.
const (
	plainFork    ForkKind = "fork"
	rewindFork   ForkKind = "rewind"
	ConflictFork ForkKind = "conflict"
)

// KeyScope is where a key names one session: a user's project.
type KeyScope struct {
	User, Project, Key string
}

// Columns are the columns of a session row a metadata change writes;
// nil ones stay.
type Columns struct {
	Title, Description, Cwd, Model, Provider, Profile, GitBranch *string
	// ClearKey lets the key go; Surface is then the new key's surface.
	ClearKey bool
	Surface  *string
	Project  *loom.Project
	// Archive writes Archived (nil: not archived).
	Archive  bool
	Archived *time.Time
	// UpdatedAt makes the session at least as recent.
	UpdatedAt *time.Time
}

// Fragment is a kept fragment's index and bytes.
type Fragment struct {
	Index int64
	Data  []byte
}
