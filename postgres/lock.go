package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loomhq/loom/sessionstore"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// lockSessionSQL serialises every transaction that checks or takes the
// writer lock of one session (Lock, Append, UpdatePart, RepairInterrupted)
// until it ends. It is its own statement: in read committed each statement
// sees what committed before it started, so the reads that follow it see
// whatever the previous holder wrote.
const lockSessionSQL = `SELECT pg_advisory_xact_lock(hashtextextended('loom session ' || $1::text, 0))`

const lockRowSQL = `SELECT ` + rowscan.LockColumns + ` FROM locks WHERE session_id = $1`

// live reports whether a lock row still binds anyone.
func (s *Store) live(l *loom.Lock) bool { return s.holder.Live(l, s.Now(), sqlstore.Alive) }

// scanLock reads a lock row and returns the live lock another handle
// holds, nil when the session is free to write.
func (s *Store) scanLock(row pgx.Row, sessionID string) (*loom.Lock, error) {
	switch l, err := rowscan.Lock(row); {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read lock of %s: %w", sessionID, err)
	default:
		return s.holder.Foreign(l, s.Now(), sqlstore.Alive), nil
	}
}

// BeginLock implements sessionstore.Locker: the lock row is read and
// written under the session's writer serialisation, so no other handle
// takes it between.
func (e engine) BeginLock(ctx context.Context) (sessionstore.LockWrites, error) {
	w, err := e.begin(ctx)
	if err != nil {
		return nil, err
	}
	return lockTx{w}, nil
}

// ExtendLock implements sessionstore.Locker.
func (e engine) ExtendLock(ctx context.Context, id string, expires time.Time) (bool, error) {
	tag, err := e.s.pool.Exec(ctx, `UPDATE locks SET expires_at = $1 WHERE session_id = $2 AND owner = $3`,
		expires, id, e.s.holder.Owner)
	return tag.RowsAffected() > 0, serverError(err)
}

// DropLock implements sessionstore.Locker.
func (e engine) DropLock(ctx context.Context, id string) error {
	_, err := e.s.pool.Exec(ctx, `DELETE FROM locks WHERE session_id = $1 AND owner = $2`, id, e.s.holder.Owner)
	return serverError(err)
}

// Holder implements sessionstore.Locker.
func (e engine) Holder() sessionstore.Holder { return e.s.holder }

// LeaseTTL implements sessionstore.Locker.
func (e engine) LeaseTTL() time.Duration { return e.s.LeaseTTL }

// lockTx is the transaction of taking a lock (sessionstore.LockTx): the
// lock row is read and written under the session's writer
// serialisation, and the session's row is not locked.
type lockTx struct{ *writeTx }

// CheckWriter implements sessionstore.LockTx.
func (w lockTx) CheckWriter(ctx context.Context, id string) error {
	if _, err := w.tx.Exec(ctx, lockSessionSQL, id); err != nil {
		return fmt.Errorf("lock %s: %w", id, err)
	}
	holder, err := w.s.scanLock(w.tx.QueryRow(ctx, lockRowSQL, id), id)
	if err != nil {
		return err
	}
	return writeState{holder: holder}.check(id)
}

// PutLock implements sessionstore.LockTx.
func (w lockTx) PutLock(ctx context.Context, id string, l loom.Lock) error {
	_, err := w.tx.Exec(ctx, `INSERT INTO locks (session_id, owner, pid, host, since, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid,
			host = excluded.host, since = excluded.since, expires_at = excluded.expires_at`,
		id, l.Owner, l.PID, l.Host, l.Since, l.Expires)
	return err
}

// writeState is what a writing transaction learns about its session once
// it holds it: the session as stored (nil when there is none yet), and
// the live lock another handle holds on it, nil if none.
type writeState struct {
	cur    *loom.Session
	holder *loom.Lock
}

// check fails with ELOCKED when another live process holds the lock.
func (st writeState) check(sessionID string) error {
	if st.holder != nil {
		return loom.Locked(sessionID, st.holder)
	}
	return nil
}

// beginWrite takes the session's writer serialisation, reads its lock,
// and reads and locks the session row (if any) until the transaction
// ends, so that deleting or forking it waits for a whole-message
// boundary. The three statements go in one round trip.
func (s *Store) beginWrite(ctx context.Context, tx pgx.Tx, sessionID string) (writeState, error) {
	var st writeState
	b := &pgx.Batch{}
	b.Queue(lockSessionSQL, sessionID)
	b.Queue(lockRowSQL, sessionID)
	b.Queue(`SELECT `+rowscan.SessionColumns+rowscan.SessionFrom+`WHERE s.id = $1 FOR UPDATE OF s`, sessionID)
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return st, fmt.Errorf("write %s: %w", sessionID, err)
	}
	var err error
	if st.holder, err = s.scanLock(br.QueryRow(), sessionID); err != nil {
		return st, err
	}
	st.cur, err = rowscan.Session(br.QueryRow(), s.live)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		st.cur = nil
	case err != nil:
		return st, fmt.Errorf("write %s: %w", sessionID, err)
	}
	return st, br.Close()
}

// beginUpdate is beginWrite for changing messages already stored: another
// live holder of the lock makes it fail with ELOCKED.
func (s *Store) beginUpdate(ctx context.Context, tx pgx.Tx, sessionID string) error {
	st, err := s.beginWrite(ctx, tx, sessionID)
	if err != nil {
		return err
	}
	return st.check(sessionID)
}
