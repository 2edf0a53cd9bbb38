package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loomhq/loom/sessionstore"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// heldByOther returns the live lock another handle holds on the session,
// nil when the session is free to write.
func (s *Store) heldByOther(ctx context.Context, db queryer, sessionID string) (*loom.Lock, error) {
	l, err := rowscan.Lock(db.QueryRowContext(ctx, `SELECT `+rowscan.LockColumns+` FROM locks WHERE session_id = ?`, sessionID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock of %s: %w", sessionID, err)
	}
	return s.holder.Foreign(l, s.Now(), sqlstore.Alive), nil
}

// checkWriter fails with ELOCKED when another live process holds the
// session's lock.
func (s *Store) checkWriter(ctx context.Context, tx *sql.Tx, sessionID string) error {
	l, err := s.heldByOther(ctx, tx, sessionID)
	if err != nil {
		return err
	}
	if l != nil {
		return loom.Locked(sessionID, l)
	}
	return nil
}

// BeginLock implements sessionstore.Locker: the lock row is read and
// written in one immediate transaction, so no other process takes it
// in between.
func (e engine) BeginLock(ctx context.Context) (sessionstore.LockWrites, error) {
	tx, err := e.s.begin(ctx)
	if err != nil {
		return nil, err
	}
	return writes{e.s, tx}, nil
}

// ExtendLock implements sessionstore.Locker.
func (e engine) ExtendLock(ctx context.Context, id string, expires time.Time) (bool, error) {
	res, err := e.s.writer.ExecContext(ctx, `UPDATE locks SET expires_at = ? WHERE session_id = ? AND owner = ?`,
		loom.FormatTime(expires), id, e.s.holder.Owner)
	if err != nil {
		return false, e.s.full(err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// DropLock implements sessionstore.Locker.
func (e engine) DropLock(ctx context.Context, id string) error {
	_, err := e.s.writer.ExecContext(ctx, `DELETE FROM locks WHERE session_id = ? AND owner = ?`, id, e.s.holder.Owner)
	return e.s.full(err)
}

// Holder implements sessionstore.Locker.
func (e engine) Holder() sessionstore.Holder { return e.s.holder }

// LeaseTTL implements sessionstore.Locker.
func (e engine) LeaseTTL() time.Duration { return e.s.LeaseTTL }

// PutLock implements sessionstore.LockTx.
func (w writes) PutLock(ctx context.Context, id string, l loom.Lock) error {
	_, err := w.ExecContext(ctx, `INSERT INTO locks (session_id, owner, pid, host, since, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid,
			host = excluded.host, since = excluded.since, expires_at = excluded.expires_at`,
		id, l.Owner, l.PID, l.Host, loom.FormatTime(l.Since), loom.FormatTime(l.Expires))
	return err
}
