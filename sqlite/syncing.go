package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/synclog"
)

// The statements of the sync log (sessionstore.LogRows).
const (
	syncHostSQL = `SELECT value FROM sync_state WHERE name = 'host'`
	// syncBaseSQL is how many of the log's rows are records of hosts this
	// store was before (SyncRehome): the host's record i is row base+i.
	syncBaseSQL = `SELECT coalesce((SELECT CAST(value AS INTEGER) FROM sync_state WHERE name = 'base'), 0)`
	// syncPosSQL reads the host and its base at once ("" without sync).
	syncPosSQL = `SELECT coalesce((SELECT value FROM sync_state WHERE name = 'host'), ''),
		coalesce((SELECT CAST(value AS INTEGER) FROM sync_state WHERE name = 'base'), 0)`
	// syncLastStampSQL is the latest stamp this store has made or
	// applied: a change made here, by any process, is stamped after it.
	syncLastStampSQL = `SELECT max(coalesce((SELECT hlc FROM sync_log ORDER BY idx DESC LIMIT 1), 0),
		coalesce((SELECT CAST(value AS INTEGER) FROM sync_state WHERE name = 'applied_hlc'), 0))`
	// syncAppliedStampSQL keeps the latest stamp of the records applied.
	syncAppliedStampSQL = `INSERT INTO sync_state (name, value) VALUES ('applied_hlc', CAST(?1 AS TEXT))
		ON CONFLICT (name) DO UPDATE SET value = CAST(max(CAST(value AS INTEGER), ?1) AS TEXT)`
	syncLastIndexSQL = `SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'sync_log'), 0)`
	syncInsertSQL    = `INSERT INTO sync_log (hlc, payload) VALUES (?, ?)`
	messageIDSQL     = `SELECT m.id FROM spans sp JOIN messages m ON m.session_id = sp.store_id AND m.seq = ?2
		WHERE sp.session_id = CAST(?1 AS TEXT) AND sp.first_seq <= ?2 AND sp.last_seq >= ?2`
)

// SyncHost returns this store's host id in sync, "" when sync is not
// set up on it.
func (s *Store) SyncHost(ctx context.Context) (synclog.HostID, error) {
	return syncHost(ctx, reads{s})
}

func syncHost(ctx context.Context, db queryer) (synclog.HostID, error) {
	var host string
	err := db.QueryRowContext(ctx, syncHostSQL).Scan(&host)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read sync host: %w", err)
	}
	return synclog.HostID(host), nil
}

// SetHost implements sessionstore.ApplySteps.
func (w syncTx) SetHost(ctx context.Context, host synclog.HostID) error {
	_, err := w.ExecContext(ctx, `INSERT INTO sync_state (name, value) VALUES ('host', ?)`, string(host))
	return err
}

// AllSessions implements sessionstore.HistorySteps.
func (w writes) AllSessions(ctx context.Context) ([]*loom.Session, error) {
	return w.s.querySessions(ctx, w, "ORDER BY s.created_at, s.id")
}

// MessagesFrom implements sessionstore.HistorySteps.
func (w writes) MessagesFrom(ctx context.Context, id string, from int64, limit int) ([]*loom.Message, error) {
	return spanMessages(ctx, w, id, from, span.OpenSeq, "", false, limit)
}

// syncBase returns how many rows of the log belong to hosts the store
// was before its current one (see SyncRehome).
func syncBase(ctx context.Context, db queryer) (int64, error) {
	var base int64
	if err := db.QueryRowContext(ctx, syncBaseSQL).Scan(&base); err != nil {
		return 0, fmt.Errorf("read sync state: %w", err)
	}
	return base, nil
}

// syncPos returns the store's host and its base (syncBase), read in the
// transaction of db: another process may have given the store a new
// host since this one last looked.
func syncPos(ctx context.Context, db queryer) (synclog.HostID, int64, error) {
	// One read on every change a syncing store records.
	var host string
	var base int64
	if err := db.QueryRowContext(ctx, syncPosSQL).Scan(&host, &base); err != nil {
		return "", 0, fmt.Errorf("read sync state: %w", err)
	}
	return synclog.HostID(host), base, nil
}

// SyncLog returns up to limit records of the store's sync log after
// index after, in order: the current host's records, with the digests
// of what a redaction replaced (synclog.LogRecord.Was).
func (s *Store) SyncLog(ctx context.Context, after int64, limit int) ([]synclog.LogRecord, error) {
	base, err := syncBase(ctx, reads{s})
	if err != nil {
		return nil, err
	}
	rows, err := reads{s}.QueryContext(ctx, `SELECT l.idx - ?1, l.hlc, l.payload, r.was FROM sync_log l LEFT JOIN sync_redacted r ON r.idx = l.idx
		WHERE l.idx > ?1 + ?2 ORDER BY l.idx LIMIT ?3`, base, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read sync log: %w", err)
	}
	defer rows.Close()
	var out []synclog.LogRecord
	for rows.Next() {
		var r synclog.LogRecord
		if err := rows.Scan(&r.Index, &r.HLC, &r.Payload, &r.Was); err != nil {
			return nil, fmt.Errorf("read sync log: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sync log: %w", err)
	}
	return out, nil
}

// Syncing reports whether the store keeps a sync log. Once found, the
// host id is kept by the handle: sync, once set up, stays.
func (w writes) Syncing(ctx context.Context) (bool, error) {
	if w.s.host.Load() != nil {
		return true, nil
	}
	host, err := syncHost(ctx, w)
	if err != nil || host == "" {
		return false, err
	}
	w.s.host.Store(&host)
	return true, nil
}

// Clock implements sessionstore.LogRows.
func (w writes) Clock() *synclog.Clock { return w.s.clock }

// LastHLC implements sessionstore.LogRows.
func (w writes) LastHLC(ctx context.Context) (synclog.HLC, error) {
	var last synclog.HLC
	if err := w.QueryRowContext(ctx, syncLastStampSQL).Scan(&last); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	return last, nil
}

// AddLogRow implements sessionstore.LogRows.
func (w writes) AddLogRow(ctx context.Context, hlc synclog.HLC, row []byte) (int64, error) {
	res, err := w.ExecContext(ctx, syncInsertSQL, hlc, row)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// AppliedAll implements sessionstore.LogRows.
func (w writes) AppliedAll(ctx context.Context) (synclog.Vector, error) { return applied(ctx, w) }

// SyncLast returns the index of the last record of the store's own sync
// log, 0 when it has none: one read, whatever the log's length.
func (s *Store) SyncLast(ctx context.Context) (int64, error) {
	var last int64
	if err := (reads{s}).QueryRowContext(ctx, syncLastIndexSQL).Scan(&last); err != nil {
		return 0, fmt.Errorf("read the sync log: %w", err)
	}
	base, err := syncBase(ctx, reads{s})
	if err != nil {
		return 0, err
	}
	return last - base, nil
}

// SyncApplied returns what the store has applied of each other host's
// log: the index of the last record of each.
func (s *Store) SyncApplied(ctx context.Context) (synclog.Vector, error) {
	return applied(ctx, reads{s})
}

func applied(ctx context.Context, db queryer) (synclog.Vector, error) {
	return hostIndexes(ctx, db, "read what sync applied", `SELECT host, idx FROM sync_applied`)
}

// hostIndexes returns the host and index of each row q reads, what
// saying what is read in its errors.
func hostIndexes(ctx context.Context, db queryer, what, q string) (synclog.Vector, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	v := synclog.Vector{}
	for rows.Next() {
		var h string
		var i int64
		if err := rows.Scan(&h, &i); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		v[synclog.HostID(h)] = i
	}
	return v, rows.Err()
}

// MessageID implements sessionstore.MergeSteps.
func (w writes) MessageID(ctx context.Context, id string, seq int64) (string, error) {
	if seq < 1 {
		return "", nil
	}
	var mid string
	err := w.QueryRowContext(ctx, messageIDSQL, id, seq).Scan(&mid)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return mid, err
}
