package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// syncWrites is a put's transaction as sessionstore.PutSync takes it.
type syncWrites struct{ *writeTx }

// SyncLast implements sessionstore.SyncTx. It makes the host's summary row
// when there is none and locks it either way: a second put of the host
// waits there until this transaction ends, then reads the last index
// this one left. A put that is refused rolls the new row back.
func (w syncWrites) SyncLast(ctx context.Context, user, host string) (int64, error) {
	var last int64
	err := w.tx.QueryRow(ctx, `INSERT INTO sync_hosts (user_id, host_id, last, records, bytes, updated_at)
		VALUES ($1, $2, 0, 0, 0, now())
		ON CONFLICT (user_id, host_id) DO UPDATE SET last = sync_hosts.last
		RETURNING last`, user, host).Scan(&last)
	return last, err
}

// SyncHeld implements sessionstore.SyncTx.
func (w syncWrites) SyncHeld(ctx context.Context, user, host string, idxs []int64) ([]loom.SyncRecord, error) {
	return rowscan.All(ctx, rowsOf{w.tx}, rowscan.SyncRecord, `SELECT `+rowscan.SyncRecordColumns+`
		FROM sync_records WHERE user_id = $1 AND host_id = $2 AND idx = ANY($3) ORDER BY idx`, user, host, idxs)
}

// SyncAppend implements sessionstore.SyncTx: the records in one statement,
// from arrays, rather than a round trip each.
func (w syncWrites) SyncAppend(ctx context.Context, user, host string, recs []loom.SyncRecord, at time.Time) error {
	idxs := make([]int64, len(recs))
	headers := make([][]byte, len(recs))
	bodies := make([][]byte, len(recs))
	var size int64
	for i, r := range recs {
		idxs[i], headers[i], bodies[i] = r.Index, sqlstore.SyncHeader(r), r.Body
		size += sqlstore.SyncSize(r)
	}
	if _, err := w.tx.Exec(ctx, `INSERT INTO sync_records (user_id, host_id, idx, header, body, received_at)
		SELECT $1::text, $2::text, r.idx, r.header, r.body, $6::timestamptz
		FROM unnest($3::bigint[], $4::bytea[], $5::bytea[]) AS r (idx, header, body)`,
		user, host, idxs, headers, bodies, at); err != nil {
		return fmt.Errorf("records %d to %d of host %s: %w", idxs[0], idxs[len(idxs)-1], host, err)
	}
	_, err := w.tx.Exec(ctx, `UPDATE sync_hosts SET last = $3, records = records + $4, bytes = bytes + $5, updated_at = $6
		WHERE user_id = $1 AND host_id = $2`, user, host, idxs[len(idxs)-1], len(recs), size, at)
	return err
}

// SyncRecords implements loom.SyncStore. A page is read outside any
// transaction: records, once stored, never change.
func (s *Store) SyncRecords(ctx context.Context, userID, host string, after int64, limit int) ([]loom.SyncRecord, error) {
	return query.SyncRecords(ctx, rowsOf{s.pool}, dialect, userID, host, after, limit)
}

// SyncHosts implements loom.SyncStore.
func (s *Store) SyncHosts(ctx context.Context, userID string) ([]loom.SyncHost, error) {
	return query.SyncHosts(ctx, rowsOf{s.pool}, dialect, userID)
}
