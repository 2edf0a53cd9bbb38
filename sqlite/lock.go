package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
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
// in between. Like every write of a lock row it is not synced to disk
// (lightly).
func (e engine) BeginLock(ctx context.Context) (sessionstore.LockWrites, error) {
	if e.s.readOnly {
		return nil, loom.Errorf(loom.EINVALID, "cannot write %s: it is open read-only", e.s.path)
	}
	e.s.prepareWrites(ctx, &e.s.wonce, hotWrites)
	conn, restore, err := e.s.lightly(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		restore()
		return nil, e.s.full(fmt.Errorf("begin: %w", err))
	}
	return lockWrites{writes{e.s, tx}, restore}, nil
}

// lockWrites is the transaction of a lock row, on the writer's
// connection taken by lightly, which End gives back.
type lockWrites struct {
	writes
	restore func()
}

// End implements sessionstore.LockWrites.
func (w lockWrites) End(err error) error {
	defer w.restore()
	return w.writes.End(err)
}

// lightly takes the writer's one connection with synchronous=NORMAL, for
// writes of lock rows alone: in WAL mode their commits are then not
// synced to disk (the next synced commit, or checkpoint, syncs them
// with it). A lock row binds only while its holder runs, so one that a
// power cut loses (taken, renewed or dropped) binds nobody: the holder
// is gone too, and a row left behind by a dead holder is taken over as
// after a crash. What the lock guards is written in transactions synced
// as before. An import took and dropped a source lock per file, each in
// a transaction synced on its own: two syncs a file, most of the wall
// time of an import of many small files (docs/performance.md). restore
// sets synchronous=FULL again and gives the connection back; a
// connection it cannot set back is discarded, so that no other write
// runs unsynced.
func (s *Store) lightly(ctx context.Context) (*sql.Conn, func(), error) {
	conn, err := s.writer.Conn(ctx)
	if err != nil {
		return nil, nil, s.full(fmt.Errorf("writer: %w", err))
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`); err != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn })
		conn.Close()
		return nil, nil, fmt.Errorf("lock write: %w", err)
	}
	return conn, func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA synchronous = FULL`); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, nil
}

// ExtendLock implements sessionstore.Locker, not synced (lightly).
func (e engine) ExtendLock(ctx context.Context, id string, expires time.Time) (bool, error) {
	conn, restore, err := e.s.lightly(ctx)
	if err != nil {
		return false, err
	}
	defer restore()
	res, err := conn.ExecContext(ctx, `UPDATE locks SET expires_at = ? WHERE session_id = ? AND owner = ?`,
		loom.FormatTime(expires), id, e.s.holder.Owner)
	if err != nil {
		return false, e.s.full(err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// DropLock implements sessionstore.Locker, not synced (lightly).
func (e engine) DropLock(ctx context.Context, id string) error {
	conn, restore, err := e.s.lightly(ctx)
	if err != nil {
		return err
	}
	defer restore()
	_, err = conn.ExecContext(ctx, `DELETE FROM locks WHERE session_id = ? AND owner = ?`, id, e.s.holder.Owner)
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
