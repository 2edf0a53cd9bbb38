package sessionstore

import (
	"context"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// ApplyTx is a syncing store's write transaction as the rules see it: the
// shared write steps (UpdateTx) and the reads and writes of the
// state sync keeps beside the sessions, each one statement or scan.
type ApplyTx interface {
	UpdateTx

	// Host returns the store's host id, "" when sync is not set up.
	Host(ctx context.Context) (synclog.HostID, error)
	// Applied returns the index of the last record of host the store
	// has applied, 0 for none.
	Applied(ctx context.Context, host synclog.HostID) (int64, error)
	// SetApplied keeps that the store has applied host's records up
	// to idx.
	SetApplied(ctx context.Context, host synclog.HostID, idx int64) error
	// Observe moves the store's clock past hlc, for every process of
	// this store: it fails with synclog.ErrClockAhead for a stamp too
	// far ahead.
	Observe(ctx context.Context, hlc synclog.HLC) error
	// MessageID returns the id of message seq of session id as the
	// session reads it, "" when it has none.
	MessageID(ctx context.Context, id string, seq int64) (string, error)
	// Owner names this process as a lock holder.
	Owner() string
	// Replaced keeps that a change this transaction applies replaces
	// text by redaction markers (another machine's loom secrets
	// redact): once it commits, the store is to be scrubbed, so that
	// the text replaced does not stay readable in its files (free
	// pages, the search index's old segments, the write-ahead log).
	Replaced(ctx context.Context) error

	// LoadState returns the JSON of state kind of session id, "" when
	// none is kept; SaveState replaces it; States returns it for every
	// session that has one.
	LoadState(ctx context.Context, kind State, id string) (string, error)
	SaveState(ctx context.Context, kind State, id, value string) error
	States(ctx context.Context, kind State) ([]StateRow, error)

	// MessageStamp returns the stamp of the append of message id, or of
	// its latest usage update with usage; zero when none is kept.
	MessageStamp(ctx context.Context, id string, usage bool) (synclog.Stamp, error)
	// PartStamp returns the stamp of the latest update of part pid of
	// message mid; ok is false when none is kept.
	PartStamp(ctx context.Context, mid, pid string) (st synclog.Stamp, ok bool, err error)
	// StampMessage keeps st as the stamp of the append of message id,
	// unless it has one.
	StampMessage(ctx context.Context, id string, st synclog.Stamp) error
	// StampPart keeps st as the stamp of part pid of message mid.
	StampPart(ctx context.Context, mid, pid string, st synclog.Stamp) error
	// StampUsage keeps st as the stamp of the usage of message mid.
	StampUsage(ctx context.Context, mid string, st synclog.Stamp) error

	// Purged reports whether session id was purged; MarkPurged keeps
	// that it was.
	Purged(ctx context.Context, id string) (bool, error)
	MarkPurged(ctx context.Context, id string) error
	// DeleteRow removes the row of session id (its messages unless a
	// fork reads them).
	DeleteRow(ctx context.Context, id string) error

	// SaveFork keeps that fork id, of kind, shares parent's messages 1
	// to base.
	SaveFork(ctx context.Context, id, parent string, base int64, kind ForkKind) error
	// ForksOf returns the forks of parent of the kinds given, by base,
	// then id.
	ForksOf(ctx context.Context, parent string, kinds ...ForkKind) ([]string, error)
	// MoveForks makes the forks of parent whose base is at least from
	// forks of to.
	MoveForks(ctx context.Context, parent, to string, from int64) error
	// TwinFork makes session id, a fork of parent titled title at turn
	// turn, that reads every message session of reads, with of's
	// counters and usage.
	TwinFork(ctx context.Context, of, parent, id, title string, turn int) error

	// Messages returns messages from to to of session id, as it reads
	// them.
	Messages(ctx context.Context, id string, from, to int64) ([]*loom.Message, error)
	// StoreOf returns the store that holds row seq of session id.
	StoreOf(ctx context.Context, id string, seq int64) (string, error)
	// Touch makes session id as recent as at, unless it is more recent
	// or imported.
	Touch(ctx context.Context, id string, at time.Time) error
	// SetColumns writes c into the row of session id.
	SetColumns(ctx context.Context, id string, c Columns) error
	// SetWriterRow gives session row.ID the metadata and times of row.
	SetWriterRow(ctx context.Context, row *loom.Session) error
	// SetConflictRow gives conflict fork id of parent its times, created,
	// no key, and parent's archived state.
	SetConflictRow(ctx context.Context, parent, id string, created time.Time) error
	// SetDeleted puts session id in the trash at at, or out of it with
	// nil (and then without its key), and reports whether it changed.
	SetDeleted(ctx context.Context, id string, at *time.Time) (bool, error)

	// KeyOf returns the user, project and key of session id's row; ok
	// is false when there is no such row.
	KeyOf(ctx context.Context, id string) (k KeyScope, ok bool, err error)
	// Claimants returns the live sessions whose row or merged metadata
	// names key k.
	Claimants(ctx context.Context, k KeyScope) ([]string, error)
	// GiveKey takes key k from every live session but holder, and gives
	// it to holder when it is not "".
	GiveKey(ctx context.Context, k KeyScope, holder string) error
	// KeyTaken reports whether a live session other than id has key k.
	KeyTaken(ctx context.Context, k KeyScope, id string) (bool, error)

	// Seen returns what the store had seen of each host's log when it
	// made a change: its own records and those it has applied.
	Seen(ctx context.Context) (synclog.Vector, error)

	// KeepFragment keeps fragment data, record idx of host; Fragments
	// returns host's kept fragments from first to last, by index;
	// DropFragments lets those up to last go.
	KeepFragment(ctx context.Context, host synclog.HostID, idx int64, data []byte) error
	Fragments(ctx context.Context, host synclog.HostID, first, last int64) ([]Fragment, error)
	DropFragments(ctx context.Context, host synclog.HostID, last int64) error

	// Retire stops host's log after index after, unless it stops
	// earlier.
	Retire(ctx context.Context, host synclog.HostID, after int64) error

	Rehomer
}

// State names what sync keeps of a session beside its row.
type State int

const (
	// MetaState is the session's merged metadata (Meta).
	MetaState State = iota
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
	PlainFork    ForkKind = "fork"
	RewindFork   ForkKind = "rewind"
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
