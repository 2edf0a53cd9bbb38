package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loomhq/loom"
)

// Engine is what a Store asks of the engine under it: a write
// transaction, with the store's sync log, and the time and lock holder
// a write is stamped with. The Store drives the transaction; the
// engine never calls back.
type Engine interface {
	// Begin starts a write transaction: its steps by role, those the
	// engine serves.
	Begin(ctx context.Context) (Tx, error)
	// Now is the time of a write, at the precision the engine keeps.
	Now() time.Time
	// BeginPut starts a write transaction for a hub's put of sync
	// records.
	BeginPut(ctx context.Context) (PutWrites, error)
	Locker
	Grants
}

// Locker is what a Store's locks ask of the engine: the handle that
// holds them, how long they are trusted, and the writes of a lock row.
type Locker interface {
	// Holder is whose locks this handle's are.
	Holder() Holder
	// LeaseTTL is how long this handle's locks stay trusted by handles
	// on other hosts without renewal (loom.LeaseTTL when 0 or less).
	LeaseTTL() time.Duration
	// BeginLock starts the transaction that takes a lock.
	BeginLock(ctx context.Context) (LockWrites, error)
	// ExtendLock moves the expiry of this handle's lock of session id
	// to expires; false when the handle no longer holds it.
	ExtendLock(ctx context.Context, id string, expires time.Time) (bool, error)
	// DropLock deletes this handle's lock of session id.
	DropLock(ctx context.Context, id string) error
}

// LockWrites is the transaction that takes a lock: its steps (LockTx)
// and its end (as Ender.End).
type LockWrites interface {
	LockTx
	End(err error) error
}

// What an engine may do besides (each is looked for on the Engine):
type (
	// forkPreparer readies the statements of forks and rewinds before
	// their transaction.
	forkPreparer interface {
		PrepareFork(ctx context.Context)
	}
	// repairReader reads a session's last turn outside any transaction,
	// so that a repair with nothing to do takes no write lock.
	repairReader interface {
		LastTurn(ctx context.Context, id string, r *Repair) error
	}
	// importWatcher hears of an import of n sessions once it is
	// committed.
	importWatcher interface {
		Imported(ctx context.Context, n int)
	}
)

// Store is the writes of loom.Store, its locks, a hub's put of sync
// records and the writes of tokens and shares, written once over an
// Engine: each begins one transaction of the engine, runs the rule of
// its write there (which records the change in the store's sync log)
// and ends it. An engine's store embeds it beside its reads.
type Store struct {
	eng Engine
	// redact, when not nil, replaces secrets in every text written
	// (Redacting).
	redact Redactor
}

// New returns the writes of a store on eng, set as opts say.
func New(eng Engine, opts ...Option) *Store {
	s := &Store{eng: eng}
	for _, o := range opts {
		o(s)
	}
	return s
}

// write runs fn in one write transaction of the engine, with the
// store's sync log, and ends it with fn's outcome.
func (s *Store) write(ctx context.Context, fn func(tx Tx, log *SyncLog) error) error {
	tx, err := s.eng.Begin(ctx)
	if err != nil {
		return err
	}
	return within(tx, func(tx Tx) error {
		log, err := openLog(ctx, tx)
		if err != nil {
			return fmt.Errorf("sync log: %w", err)
		}
		return fn(tx, log)
	})
}

// within runs fn in transaction tx, begun, and ends tx with fn's
// outcome. A panic in fn rolls tx back before it goes on.
func within[T interface{ End(error) error }](tx T, fn func(T) error) error {
	ended := false
	defer func() {
		if !ended {
			tx.End(errAborted)
		}
	}()
	err := fn(tx)
	ended = true
	return tx.End(err)
}

// errAborted ends a transaction that a panic left.
var errAborted = errors.New("write aborted")

// Append implements loom.Store with Append.
func (s *Store) Append(ctx context.Context, x *loom.Session, msgs ...*loom.Message) error {
	if err := prepareAppend(x, msgs); err != nil {
		return err
	}
	s.redactSession(x)
	s.redactMessages(msgs)
	var fresh *loom.Session
	err := s.write(ctx, func(tx Tx, log *SyncLog) (err error) {
		fresh, err = appendIn(ctx, tx, log, x, msgs, s.eng.Holder().Owner, s.eng.Now())
		return err
	})
	if err != nil {
		return err
	}
	*x = *fresh
	return nil
}

// UpdatePart implements loom.Store with UpdatePart.
func (s *Store) UpdatePart(ctx context.Context, sessionID string, seq int64, part loom.Part) error {
	if err := part.Validate(); err != nil {
		return err
	}
	part = s.redactPart(part)
	return s.write(ctx, func(tx Tx, log *SyncLog) error {
		return updatePart(ctx, tx, log, sessionID, seq, part, s.eng.Now())
	})
}

// UpdateUsage implements loom.Store with UpdateUsage.
func (s *Store) UpdateUsage(ctx context.Context, sessionID string, seq int64, u loom.Usage) error {
	return s.write(ctx, func(tx Tx, log *SyncLog) error {
		return updateUsage(ctx, tx, log, sessionID, seq, u)
	})
}

// RepairInterrupted implements loom.Store with RepairInterrupted. An
// engine that reads outside transactions is asked first, so that a
// session with nothing to repair (almost always) takes no write lock;
// the transaction asks again, as another writer may have finished or
// repaired the turn meanwhile.
func (s *Store) RepairInterrupted(ctx context.Context, sessionID string) (int, error) {
	if rr, ok := s.eng.(repairReader); ok {
		r := newRepair(s.eng.Now())
		if err := rr.LastTurn(ctx, sessionID, r); err != nil || r.Parts == 0 {
			return 0, err
		}
	}
	var repaired int
	err := s.write(ctx, func(tx Tx, log *SyncLog) (err error) {
		repaired, err = repairInterrupted(ctx, tx, log, sessionID, s.eng.Now())
		return err
	})
	return repaired, err
}

// UpdateSession implements loom.Store with UpdateSession.
func (s *Store) UpdateSession(ctx context.Context, id string, u loom.SessionUpdate) (*loom.Session, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	s.redactTexts(u.Title, u.Description)
	var out *loom.Session
	err := s.write(ctx, func(tx Tx, log *SyncLog) (err error) {
		out, err = updateSession(ctx, tx, log, id, u, s.eng.Now())
		return err
	})
	return out, err
}

// Fork implements loom.Store with Fork.
func (s *Store) Fork(ctx context.Context, id string, opts loom.ForkOptions) (*loom.Session, error) {
	s.prepareFork(ctx)
	s.redactTexts(&opts.Title)
	var out *loom.Session
	err := s.write(ctx, func(tx Tx, log *SyncLog) error {
		src, err := tx.ForkSource(ctx, id)
		if err != nil {
			return err
		}
		out, err = forkIn(ctx, tx, log, src, opts)
		return err
	})
	return out, err
}

// Rewind implements loom.Store with Rewind.
func (s *Store) Rewind(ctx context.Context, id string, opts loom.RewindOptions) (*loom.Session, error) {
	s.prepareFork(ctx)
	var out *loom.Session
	err := s.write(ctx, func(tx Tx, log *SyncLog) (err error) {
		out, err = rewindIn(ctx, tx, log, id, opts, s.eng.Holder().Owner, s.eng.Now())
		return err
	})
	return out, err
}

func (s *Store) prepareFork(ctx context.Context) {
	if p, ok := s.eng.(forkPreparer); ok {
		p.PrepareFork(ctx)
	}
}

// Delete implements loom.Store with Delete.
func (s *Store) Delete(ctx context.Context, id string, opts loom.DeleteOptions) ([]*loom.Session, error) {
	var out []*loom.Session
	err := s.write(ctx, func(tx Tx, log *SyncLog) (err error) {
		out, err = deleteIn(ctx, tx, log, id, opts, s.eng.Holder().Owner, s.eng.Now())
		return err
	})
	return out, err
}

// Restore implements loom.Store with Restore.
func (s *Store) Restore(ctx context.Context, id string) error {
	return s.write(ctx, func(tx Tx, log *SyncLog) error {
		return restoreIn(ctx, tx, log, id)
	})
}

// Prune implements loom.Store with Prune.
func (s *Store) Prune(ctx context.Context, opts loom.PruneOptions) (*loom.PruneResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var res *loom.PruneResult
	err := s.write(ctx, func(tx Tx, log *SyncLog) (err error) {
		res, err = pruneIn(ctx, tx, log, opts, s.eng.Holder().Owner, s.eng.Now())
		return err
	})
	return res, err
}

// Import implements loom.Store with Import: everything is validated
// before anything is written, and the whole import is one transaction.
func (s *Store) Import(ctx context.Context, data []*loom.SessionData) error {
	if err := loom.ValidateImport(data); err != nil {
		return err
	}
	if len(data) == 0 {
		return nil
	}
	s.redactImport(data, nil)
	err := s.write(ctx, func(tx Tx, log *SyncLog) error {
		return importIn(ctx, tx, log, data)
	})
	if err == nil {
		s.imported(ctx, len(data))
	}
	return err
}

// ApplyImport implements loom.ImportApplier: the new sessions, the
// changes and the file records in one transaction.
func (s *Store) ApplyImport(ctx context.Context, w *loom.ImportWrite) error {
	if err := w.Validate(); err != nil { // its files' records included
		return err
	}
	if w.Empty() {
		return nil
	}
	s.redactImport(w.Sessions, w.Changes)
	if err := s.redactOriginals(w.Originals); err != nil {
		return err
	}
	var fresh []*loom.Session
	err := s.write(ctx, func(tx Tx, log *SyncLog) (err error) {
		if len(w.Sessions) > 0 {
			if err := importIn(ctx, tx, log, w.Sessions); err != nil {
				return err
			}
		}
		fresh, err = applyChanges(ctx, tx, log, w.Changes, s.eng.Holder().Owner, s.eng.Now())
		if err != nil {
			return err
		}
		if err := tx.RecordCalls(ctx, w.Calls); err != nil {
			return err
		}
		if err := keepOriginals(ctx, tx, log, w.Originals, false); err != nil {
			return err
		}
		return tx.RecordFiles(ctx, w.Files)
	})
	if err != nil {
		return err
	}
	s.imported(ctx, len(w.Sessions))
	refresh(w.Changes, fresh)
	return nil
}

// RecordImportedFiles implements loom.Store.
func (s *Store) RecordImportedFiles(ctx context.Context, files []loom.ImportedFile) error {
	if err := (&loom.ImportWrite{Files: files}).Validate(); err != nil {
		return err
	}
	return s.write(ctx, func(tx Tx, _ *SyncLog) error { return tx.RecordFiles(ctx, files) })
}

func (s *Store) imported(ctx context.Context, n int) {
	if w, ok := s.eng.(importWatcher); ok && n > 0 {
		w.Imported(ctx, n)
	}
}

// PutSyncRecords implements loom.SyncStore with PutSync, in one
// transaction of the engine.
func (s *Store) PutSyncRecords(ctx context.Context, userID string, recs []loom.SyncRecord) (int, error) {
	tx, err := s.eng.BeginPut(ctx)
	if err != nil {
		return 0, fmt.Errorf("put sync records: %w", err)
	}
	var stored int
	err = within(tx, func(tx PutWrites) (err error) {
		stored, err = PutSync(ctx, tx, userID, recs, s.eng.Now())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("put sync records: %w", err)
	}
	return stored, nil
}

// Lock implements loom.Store: the lock row is checked and written in
// one transaction of the engine (PutLock), and the lease renews it
// until it is released (Holder.TakeLock).
func (s *Store) Lock(ctx context.Context, sessionID string) (loom.Lease, error) {
	return s.eng.Holder().TakeLock(ctx, sessionID, s.eng.Now, s.eng.LeaseTTL(), LockSteps{
		Take: func(ctx context.Context, l loom.Lock) error {
			tx, err := s.eng.BeginLock(ctx)
			if err != nil {
				return err
			}
			return within(tx, func(tx LockWrites) error { return putLock(ctx, tx, sessionID, l) })
		},
		Extend: func(ctx context.Context, expires time.Time) (bool, error) {
			return s.eng.ExtendLock(ctx, sessionID, expires)
		},
		Drop: func(ctx context.Context) error { return s.eng.DropLock(ctx, sessionID) },
	})
}

// LockSource implements loom.SourceLocker with a lock row of its own
// (sourceLockID).
func (s *Store) LockSource(ctx context.Context, userID, path string) (loom.Lease, error) {
	return s.Lock(ctx, sourceLockID(userID, path))
}
