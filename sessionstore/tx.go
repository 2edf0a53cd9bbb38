package sessionstore

import (
	"context"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/synclog"
)

// Tx is an engine's write transaction as the shared algorithms see it:
// Append, Delete, Prune, Restore, Fork, Rewind and WriteMessage say what
// to do, and the engine's Tx does each step in its own SQL, written once
// per engine. Methods are coarse where an engine sends several
// statements in one round trip (StoreAppend, CreateFork, StoreRewind).
// Every method runs inside the transaction the engine began, so what the
// algorithm reads stays true until it commits.
type Tx interface {
	// Session returns session id with its lock, in the trash or not;
	// ENOTFOUND when there is none.
	Session(ctx context.Context, id string) (*loom.Session, error)
	// SessionForWrite returns session id as a write finds it, with its
	// lock, locking its row where the engine locks rows; nil when there
	// is none (trashed sessions included).
	SessionForWrite(ctx context.Context, id string) (*loom.Session, error)
	// CheckWriter fails with ELOCKED when another live process holds
	// the lock of session id, which need not exist yet.
	CheckWriter(ctx context.Context, id string) error
	// CreateSession inserts row, a session its first message creates
	// (loom.Session.Created). A row with the same id that appeared
	// meanwhile is left alone; a live session with the same key is
	// ECONFLICT.
	CreateSession(ctx context.Context, row *loom.Session) error
	// StoreAppend stores msgs, which cur.ApplyAppend numbered, where
	// session cur stores its own, and cur's counters, usage and times.
	StoreAppend(ctx context.Context, cur *loom.Session, msgs []*loom.Message) error

	// Family returns session id and its sub-agent sessions, of every
	// generation, with their locks, for their removal: the live ones,
	// and those in the trash too with trashed. Where locks are read
	// apart from rows, the engine keeps them from changing until the
	// transaction ends.
	Family(ctx context.Context, id string, trashed bool) ([]*loom.Session, error)
	// Prunable returns the sessions a prune with opts at now selects
	// (see loom.PruneOptions), oldest first, with their locks.
	Prunable(ctx context.Context, opts loom.PruneOptions, now time.Time) ([]*loom.Session, error)
	// EmptyTrash purges the sessions trashed before before and returns
	// their ids.
	EmptyTrash(ctx context.Context, before time.Time) ([]string, error)
	// Purge removes session id and its sub-agent sessions for good.
	Purge(ctx context.Context, id string) error
	// Trash moves the live sessions of the families of ids to the trash
	// at at, and returns the ids of the sessions it moved.
	Trash(ctx context.Context, ids []string, at time.Time) ([]string, error)
	// Untrash brings back the sessions of id's family trashed at at,
	// returning their ids, or reporting whether a key another live
	// session took meanwhile stopped it.
	Untrash(ctx context.Context, id string, at time.Time) (restored []string, taken bool, err error)

	ForkReads
	// CreateFork writes the session plan describes, forked from src,
	// with spans, and returns it as stored.
	CreateFork(ctx context.Context, src *loom.Session, plan *ForkPlan, spans []sqlstore.Span) (*loom.Session, error)
	// StoreRewind writes a rewind of src as plan describes: the fork
	// that takes the later turns reads them through forkSpans, and src
	// keeps its turns with keepSpans. It returns the fork as stored.
	StoreRewind(ctx context.Context, src *loom.Session, plan *RewindPlan, forkSpans, keepSpans []sqlstore.Span) (*loom.Session, error)

	// Spans returns the spans of session id.
	Spans(ctx context.Context, id string) ([]sqlstore.Span, error)
	// WriteSpans replaces the spans of session id.
	WriteSpans(ctx context.Context, id string, spans []sqlstore.Span) error
	// Readers returns the sessions other than id whose spans read row
	// seq of store.
	Readers(ctx context.Context, store string, seq int64, id string) ([]string, error)
	// CopyRow copies row seq of store from to store to: with body as a
	// body of its own, or sharing the row's body when body is nil.
	CopyRow(ctx context.Context, to, from string, seq int64, body *sqlstore.Body) error
	// DropUnread deletes row seq of store if no span reads it any more.
	DropUnread(ctx context.Context, store string, seq int64) error
	// Rewrite stores body in row seq of store, its session's own,
	// copying first a body another row shares.
	Rewrite(ctx context.Context, store string, seq int64, body sqlstore.Body) error
}

// SyncLog is a store's sync log as a transaction writes it: once sync is
// set up on a store, each change it makes is also a record of its own
// log (package synclog), in the same transaction, which `loom sync`
// pushes to the hub. The engine hands it to the write algorithms beside
// its Tx; a store that does not sync hands nil, and records nothing.
type SyncLog interface {
	// ApplyTx is the transaction the stamps of a change are kept
	// through (Local), the same as where a record of another host is
	// applied: its log (AppendRecord) and what it has seen (Seen).
	ApplyTx
}

// Record adds the payload build makes to log, the store's sync log, nil
// when it keeps none; build runs only then, with the log, so a store
// that does not sync pays for no payload. A nil payload is a change that
// changed nothing. Every change a store makes is recorded here, by the
// write algorithms of this package.
func Record(ctx context.Context, log SyncLog, build func(log SyncLog) (synclog.Payload, error)) error {
	if log == nil {
		return nil
	}
	p, err := build(log)
	if err != nil {
		return fmt.Errorf("sync log: %w", err)
	}
	if p == nil {
		return nil
	}
	if err := record(ctx, log, p); err != nil {
		return fmt.Errorf("sync log: %w", err)
	}
	return nil
}

// record adds p to tx's log (AppendRecord) and keeps the stamps of the
// change it records (Local).
func record(ctx context.Context, tx ApplyTx, p synclog.Payload) error {
	st, idx, err := tx.AppendRecord(ctx, p)
	if err != nil {
		return err
	}
	return Local(ctx, tx, st, idx, p)
}

// ForkReads are what a fork or rewind plan asks of the store about the
// session it forks (src), inside the transaction. Each reads src's
// messages as src holds them (through its spans) and costs one seek or a
// short walk, whatever src's length.
type ForkReads interface {
	// TurnFrom returns the turn of src's first message at or after seq;
	// ok is false when there is none.
	TurnFrom(ctx context.Context, src string, seq int64) (turn int, ok bool, err error)
	// LastUser returns src's last user message at or before seq, nil
	// when there is none.
	LastUser(ctx context.Context, src string, seq int64) (*loom.Message, error)
	// LastSummary returns the seq of src's latest summary message at or
	// before seq, 0 when there is none.
	LastSummary(ctx context.Context, src string, seq int64) (int64, error)
	// UsageOf sums the usage of src's messages from to to.
	UsageOf(ctx context.Context, src string, from, to int64) (loom.Usage, error)
	// TitlesLike returns the titles of user's live sessions that start
	// with base, compared case-insensitively.
	TitlesLike(ctx context.Context, user, base string) ([]string, error)
}
