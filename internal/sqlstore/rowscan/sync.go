package rowscan

import (
	"context"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

// SyncRecordColumns are the columns SyncRecord reads from sync_records.
const SyncRecordColumns = `host_id, idx, header, body, received_at`

// SyncRecord reads a row of SyncRecordColumns.
func SyncRecord(row Scanner) (loom.SyncRecord, error) {
	var r loom.SyncRecord
	var at Time
	err := row.Scan(&r.Host, &r.Index, &r.Header, &r.Body, &at)
	r.ReceivedAt = at.T
	return r, err
}

// SyncPage runs q, a query of SyncRecordColumns in index order, and reads
// its rows until the page holds loom.MaxSyncPageBytes: the record that
// would take it past that is left for the next page, unless it is the
// first.
func SyncPage(ctx context.Context, db Querier, q string, args ...any) ([]loom.SyncRecord, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []loom.SyncRecord
	var size int64
	for rows.Next() {
		r, err := SyncRecord(rows)
		if err != nil {
			return nil, err
		}
		size += sqlstore.SyncSize(r)
		if len(out) > 0 && size > loom.MaxSyncPageBytes {
			return out, nil
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SyncHostColumns are the columns SyncHost reads from sync_hosts.
const SyncHostColumns = `host_id, last, records, bytes, updated_at`

// SyncHost reads a row of SyncHostColumns.
func SyncHost(row Scanner) (loom.SyncHost, error) {
	var h loom.SyncHost
	var at Time
	err := row.Scan(&h.Host, &h.Last, &h.Records, &h.Bytes, &at)
	h.UpdatedAt = at.T
	return h, err
}
