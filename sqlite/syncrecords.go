package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// syncWrites is a put's transaction as sessionstore.PutSync takes it.
type syncWrites struct{ writes }

// SyncLast implements sessionstore.SyncTx.
func (w syncWrites) SyncLast(ctx context.Context, user, host string) (int64, error) {
	var last int64
	err := w.tx.QueryRowContext(ctx, `SELECT last FROM sync_hosts WHERE user_id = ? AND host_id = ?`, user, host).Scan(&last)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	return last, err
}

// SyncHeld implements sessionstore.SyncTx.
func (w syncWrites) SyncHeld(ctx context.Context, user, host string, idxs []int64) ([]loom.SyncRecord, error) {
	list, err := json.Marshal(idxs)
	if err != nil {
		return nil, err
	}
	return rowscan.All(ctx, rowsOf{w.tx}, rowscan.SyncRecord, `SELECT `+rowscan.SyncRecordColumns+`
		FROM json_each(?) j CROSS JOIN sync_records ON user_id = ? AND host_id = ? AND idx = j.value
		ORDER BY idx`, string(list), user, host)
}

// SyncAppend implements sessionstore.SyncTx.
func (w syncWrites) SyncAppend(ctx context.Context, user, host string, recs []loom.SyncRecord, at time.Time) error {
	ins, err := w.tx.PrepareContext(ctx, `INSERT INTO sync_records (user_id, host_id, idx, header, body, received_at) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	when := loom.FormatTime(at)
	var size int64
	for _, r := range recs {
		if _, err := ins.ExecContext(ctx, user, host, r.Index, sqlstore.SyncHeader(r), r.Body, when); err != nil {
			return fmt.Errorf("record %d of host %s: %w", r.Index, host, err)
		}
		size += sqlstore.SyncSize(r)
	}
	_, err = w.tx.ExecContext(ctx, `INSERT INTO sync_hosts (user_id, host_id, last, records, bytes, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_id, host_id) DO UPDATE SET last = excluded.last,
			records = records + excluded.records, bytes = bytes + excluded.bytes, updated_at = excluded.updated_at`,
		user, host, recs[len(recs)-1].Index, len(recs), size, when)
	return err
}

// SyncRecords implements loom.SyncStore, on the reader pool: pulls
// never queue on the writer.
func (s *Store) SyncRecords(ctx context.Context, userID, host string, after int64, limit int) ([]loom.SyncRecord, error) {
	return query.SyncRecords(ctx, rowsOf{reads{s}}, dialect, userID, host, after, limit)
}

// SyncHosts implements loom.SyncStore, on the reader pool.
func (s *Store) SyncHosts(ctx context.Context, userID string) ([]loom.SyncHost, error) {
	return query.SyncHosts(ctx, rowsOf{reads{s}}, dialect, userID)
}
