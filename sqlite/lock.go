package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/lockcheck"
)

// lockLive reports whether l still binds: it is ours, or its holder runs
// on this host, or (on another host) its lease has not expired.
func (s *Store) lockLive(l *loom.Lock) bool {
	if l.Owner == s.owner {
		return true
	}
	if l.Host == s.host {
		return lockcheck.Alive(l.PID)
	}
	return s.Now().Before(l.Expires)
}

// heldByOther returns the live lock another handle holds on the session,
// nil when the session is free to write.
func (s *Store) heldByOther(ctx context.Context, db queryer, sessionID string) (*loom.Lock, error) {
	var l loom.Lock
	var since, expires string
	err := db.QueryRowContext(ctx, `SELECT owner, pid, host, since, expires_at FROM locks WHERE session_id = ?`, sessionID).
		Scan(&l.Owner, &l.PID, &l.Host, &since, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock of %s: %w", sessionID, err)
	}
	l.Since, _ = loom.ParseTime(since)
	l.Expires, _ = loom.ParseTime(expires)
	if l.Owner == s.owner || !s.lockLive(&l) {
		return nil, nil
	}
	return &l, nil
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

// Lock implements loom.Store.
func (s *Store) Lock(ctx context.Context, sessionID string) (*loom.Lease, error) {
	if sessionID == "" {
		return nil, loom.Errorf(loom.EINVALID, "lock needs a session id")
	}
	now := s.Now()
	l := loom.Lock{Owner: s.owner, PID: s.pid, Host: s.host, Since: now, Expires: now.Add(loom.LeaseTTL)}
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkWriter(ctx, tx, sessionID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO locks (session_id, owner, pid, host, since, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid,
				host = excluded.host, since = excluded.since, expires_at = excluded.expires_at`,
			sessionID, l.Owner, l.PID, l.Host, loom.FormatTime(l.Since), loom.FormatTime(l.Expires))
		if err != nil {
			return fmt.Errorf("lock %s: %w", sessionID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	renew := func(ctx context.Context) error {
		res, err := s.writer.ExecContext(ctx, `UPDATE locks SET expires_at = ? WHERE session_id = ? AND owner = ?`,
			loom.FormatTime(s.Now().Add(loom.LeaseTTL)), sessionID, s.owner)
		if err != nil {
			return fmt.Errorf("renew lock of %s: %w", sessionID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return loom.Errorf(loom.ELOCKED, "lock of session %s was lost", sessionID)
		}
		return nil
	}
	release := func(ctx context.Context) error {
		_, err := s.writer.ExecContext(ctx, `DELETE FROM locks WHERE session_id = ? AND owner = ?`, sessionID, s.owner)
		if err != nil {
			return fmt.Errorf("unlock %s: %w", sessionID, err)
		}
		return nil
	}
	return loom.NewLease(sessionID, l, loom.LeaseTTL/3, renew, release), nil
}
