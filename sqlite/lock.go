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

// Lock implements loom.Store. The lock row is read and written in one
// immediate transaction, so no other process takes it in between.
func (s *Store) Lock(ctx context.Context, sessionID string) (loom.Lease, error) {
	return s.holder.TakeLock(ctx, sessionID, s.Now, s.LeaseTTL, sessionstore.LockSteps{
		Take: func(ctx context.Context, l loom.Lock) error {
			return s.withTx(ctx, func(tx *sql.Tx) error { return sessionstore.PutLock(ctx, writes{s, tx}, sessionID, l) })
		},
		Extend: func(ctx context.Context, expires time.Time) (bool, error) {
			res, err := s.writer.ExecContext(ctx, `UPDATE locks SET expires_at = ? WHERE session_id = ? AND owner = ?`,
				loom.FormatTime(expires), sessionID, s.holder.Owner)
			if err != nil {
				return false, s.full(err)
			}
			n, err := res.RowsAffected()
			return n > 0, err
		},
		Drop: func(ctx context.Context) error {
			_, err := s.writer.ExecContext(ctx, `DELETE FROM locks WHERE session_id = ? AND owner = ?`, sessionID, s.holder.Owner)
			return s.full(err)
		},
	})
}

// PutLock implements sessionstore.LockTx.
func (w writes) PutLock(ctx context.Context, id string, l loom.Lock) error {
	_, err := w.ExecContext(ctx, `INSERT INTO locks (session_id, owner, pid, host, since, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid,
			host = excluded.host, since = excluded.since, expires_at = excluded.expires_at`,
		id, l.Owner, l.PID, l.Host, loom.FormatTime(l.Since), loom.FormatTime(l.Expires))
	return err
}

// LockSource implements loom.SourceLocker with a lock row of its own
// (sessionstore.SourceLockID).
func (s *Store) LockSource(ctx context.Context, userID, path string) (loom.Lease, error) {
	return s.Lock(ctx, sessionstore.SourceLockID(userID, path))
}
