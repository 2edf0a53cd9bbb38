package loom

import (
	"context"
	"io"
)

// Store is the session store every engine implements: what a way out
// may read (Reader) and the writes. Its contracts are checked by the
// conformance package.
type Store interface {
	Reader

	// Append stores msgs at the end of session s in one transaction,
	// creating the session first when no session with s.ID exists (lazy
	// creation). It assigns ids, seq and times the messages lack, and
	// refreshes s from the store (counters, usage, times).
	Append(ctx context.Context, s *Session, msgs ...*Message) error
	// UpdatePart replaces the part with part.ID in message seq of the
	// session: how a tool part moves from running to completed or error.
	// A part with an id the message does not have is added after its
	// last part: how an imported reply that its tool was still writing
	// gets the rest of its parts.
	UpdatePart(ctx context.Context, sessionID string, seq int64, part Part) error
	// UpdateUsage sets the usage of message seq, which the session
	// stores itself (not one it inherits), and moves the session's
	// totals by the difference: how an imported reply that its tool was
	// still writing gets its final usage. ENOTFOUND when the session
	// stores no such message.
	UpdateUsage(ctx context.Context, sessionID string, seq int64, u Usage) error
	// RepairInterrupted marks tool parts left running (their process
	// died) as errors with "interrupted", and appends an "interrupted"
	// result for every tool call that has none, so no provider receives
	// an orphaned call. It returns how many parts it repaired.
	RepairInterrupted(ctx context.Context, sessionID string) (int, error)

	// UpdateSession changes metadata: title, description, key, project.
	UpdateSession(ctx context.Context, id string, u SessionUpdate) (*Session, error)
	// Fork copies turns 1..opts.Turn of a session into a new session with
	// kind fork, parent_id and fork_turn.
	Fork(ctx context.Context, id string, opts ForkOptions) (*Session, error)
	// Rewind takes a session back to the end of turn opts.Turn, in one
	// transaction: it keeps its id, key and turns 1..Turn, and its later
	// turns move to a new fork (kind fork, parent_id the session,
	// fork_turn Turn, titled "T (rewound)") that holds the whole
	// conversation as it was, so nothing is lost. The fork keeps the
	// session's last activity time and the usage of the turns it took;
	// the session is updated now. It returns the fork. While another
	// live process holds the session it fails with ELOCKED.
	Rewind(ctx context.Context, id string, opts RewindOptions) (*Session, error)
	// Delete moves a session and its sub-agent sessions to the trash, or
	// removes them with their messages and search entries with
	// opts.Purge, in one transaction. While another live process holds
	// the lock of the session or of one of those sub-agent sessions it
	// fails with ELOCKED naming that holder, unless opts.Force (a lock
	// whose holder is gone does not count). It returns the sessions it
	// removed, the session first, then its sub-agent sessions in Family
	// order; trashed ones carry their DeletedAt. Trash older than
	// TrashTTL is purged at the same time.
	Delete(ctx context.Context, id string, opts DeleteOptions) ([]*Session, error)
	// Restore brings a session (and its sub-agent sessions) back from the
	// trash.
	Restore(ctx context.Context, id string) error
	// Prune purges sessions not updated for opts.OlderThan, skipping
	// archived ones and locked ones; with DryRun it only reports.
	Prune(ctx context.Context, opts PruneOptions) (*PruneResult, error)

	// Lock attaches this store handle to a session for writing. A live
	// holder makes it fail with ELOCKED naming that holder; a dead one
	// (its process gone, or its lease expired) is taken over. The session
	// need not exist yet.
	Lock(ctx context.Context, sessionID string) (Lease, error)

	// Import writes whole sessions with their messages as they are (ids,
	// seq, times), validating all before writing any, in one transaction.
	Import(ctx context.Context, sessions []*SessionData) error

	// ImportedFiles returns the records of the source files userID
	// imported from tool's sessions (every tool's when tool is empty),
	// by path.
	ImportedFiles(ctx context.Context, userID, tool string) ([]ImportedFile, error)
	// RecordImportedFiles stores records of imported source files in one
	// transaction, each replacing the record of the same user and path.
	RecordImportedFiles(ctx context.Context, files []ImportedFile) error

	io.Closer
}

// SessionData is a session with its messages: the unit of export and
// import.
type SessionData struct {
	Session  *Session   `json:"session"`
	Messages []*Message `json:"messages"`
}
