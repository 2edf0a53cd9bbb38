package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/lockcheck"
)

// lockSessionSQL serialises every transaction that checks or takes the
// writer lock of one session (Lock, Append, UpdatePart, RepairInterrupted)
// until it ends. It is its own statement: in read committed each statement
// sees what committed before it started, so the reads that follow it see
// whatever the previous holder wrote.
const lockSessionSQL = `SELECT pg_advisory_xact_lock(hashtextextended('loom session ' || $1::text, 0))`

const lockRowSQL = `SELECT owner, pid, host, since, expires_at FROM locks WHERE session_id = $1`

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

// scanLock reads a lock row and returns the live lock another handle
// holds, nil when the session is free to write.
func (s *Store) scanLock(row pgx.Row, sessionID string) (*loom.Lock, error) {
	var l loom.Lock
	err := row.Scan(&l.Owner, &l.PID, &l.Host, &l.Since, &l.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock of %s: %w", sessionID, err)
	}
	l.Since, l.Expires = l.Since.UTC(), l.Expires.UTC()
	if l.Owner == s.owner || !s.lockLive(&l) {
		return nil, nil
	}
	return &l, nil
}

// Lock implements loom.Store.
func (s *Store) Lock(ctx context.Context, sessionID string) (*loom.Lease, error) {
	if sessionID == "" {
		return nil, loom.Errorf(loom.EINVALID, "lock needs a session id")
	}
	now := s.Now()
	l := loom.Lock{Owner: s.owner, PID: s.pid, Host: s.host, Since: ms(now), Expires: ms(now.Add(loom.LeaseTTL))}
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockSessionSQL, sessionID); err != nil {
			return fmt.Errorf("lock %s: %w", sessionID, err)
		}
		holder, err := s.scanLock(tx.QueryRow(ctx, lockRowSQL, sessionID), sessionID)
		if err != nil {
			return err
		}
		if holder != nil {
			return loom.Locked(sessionID, holder)
		}
		_, err = tx.Exec(ctx, `INSERT INTO locks (session_id, owner, pid, host, since, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid,
				host = excluded.host, since = excluded.since, expires_at = excluded.expires_at`,
			sessionID, l.Owner, l.PID, l.Host, l.Since, l.Expires)
		if err != nil {
			return fmt.Errorf("lock %s: %w", sessionID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	renew := func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, `UPDATE locks SET expires_at = $1 WHERE session_id = $2 AND owner = $3`,
			ms(s.Now().Add(loom.LeaseTTL)), sessionID, s.owner)
		if err != nil {
			return fmt.Errorf("renew lock of %s: %w", sessionID, err)
		}
		if tag.RowsAffected() == 0 {
			return loom.Errorf(loom.ELOCKED, "lock of session %s was lost", sessionID)
		}
		return nil
	}
	release := func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `DELETE FROM locks WHERE session_id = $1 AND owner = $2`, sessionID, s.owner)
		if err != nil {
			return fmt.Errorf("unlock %s: %w", sessionID, err)
		}
		return nil
	}
	return loom.NewLease(sessionID, l, loom.LeaseTTL/3, renew, release), nil
}

// writeState is what a writing transaction learns about its session once
// it holds it: whether the row exists, its counters, and whether it is in
// the trash.
type writeState struct {
	exists  bool
	count   int
	turns   int
	deleted bool
	// holder is the live lock another handle holds, nil if none.
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
// and locks the session row (if any) until the transaction ends, so that
// deleting or forking it waits for a whole-message boundary. The three
// statements go in one round trip.
func (s *Store) beginWrite(ctx context.Context, tx pgx.Tx, sessionID string) (writeState, error) {
	var st writeState
	b := &pgx.Batch{}
	b.Queue(lockSessionSQL, sessionID)
	b.Queue(lockRowSQL, sessionID)
	b.Queue(`SELECT message_count, turn_count, deleted_at FROM sessions WHERE id = $1 FOR UPDATE`, sessionID)
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return st, fmt.Errorf("write %s: %w", sessionID, err)
	}
	var err error
	if st.holder, err = s.scanLock(br.QueryRow(), sessionID); err != nil {
		return st, err
	}
	var deleted *time.Time
	err = br.QueryRow().Scan(&st.count, &st.turns, &deleted)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return st, br.Close()
	case err != nil:
		return st, fmt.Errorf("write %s: %w", sessionID, err)
	}
	st.exists, st.deleted = true, deleted != nil
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
