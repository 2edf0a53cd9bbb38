package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// The records of other hosts a store keeps (table sync_kept), so that any
// machine can send a hub that lost them everything it holds: see
// docs/sync.md, "A lost hub".

// SyncKeep keeps records of other hosts as the hub served them, sealed,
// in one transaction; a record kept already is left as it is. It moves
// each host's kept index (SyncKept) on over the records that now follow
// it without a gap.
func (s *Store) SyncKeep(ctx context.Context, recs []loom.SyncRecord) error {
	if len(recs) == 0 {
		return nil
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO sync_kept (host, idx, header, body) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`)
		if err != nil {
			return fmt.Errorf("keep sync records: %w", err)
		}
		defer ins.Close()
		hosts := map[string]bool{}
		for _, r := range recs {
			if _, err := ins.ExecContext(ctx, r.Host, r.Index, r.Header, r.Body); err != nil {
				return fmt.Errorf("keep record %d of host %s: %w", r.Index, r.Host, err)
			}
			hosts[r.Host] = true
		}
		for h := range hosts {
			if err := advanceKept(ctx, tx, h); err != nil {
				return fmt.Errorf("keep records of host %s: %w", h, err)
			}
		}
		return nil
	})
}

// advanceKept moves host's kept index on over the records kept after it
// without a gap.
func advanceKept(ctx context.Context, tx *sql.Tx, host string) error {
	var upto int64
	err := tx.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM sync_state WHERE name = 'kept ' || ?`, host).Scan(&upto)
	if err != nil && err != sql.ErrNoRows {
		return err
	}
	next, err := rowscan.All(ctx, rowsOf{tx}, func(r rowscan.Scanner) (int64, error) {
		var i int64
		return i, r.Scan(&i)
	}, `SELECT idx FROM sync_kept WHERE host = ? AND idx > ? ORDER BY idx`, host, upto)
	if err != nil {
		return err
	}
	to := upto
	for _, i := range next {
		if i != to+1 {
			break
		}
		to = i
	}
	if to == upto {
		return nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO sync_state (name, value) VALUES ('kept ' || ?1, CAST(?2 AS TEXT))
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, host, to)
	return err
}

// SyncKept returns, for each other host of which the store keeps records,
// the index up to which it keeps every one of them from the first.
func (s *Store) SyncKept(ctx context.Context) (synclog.Vector, error) {
	return hostIndexes(ctx, reads{s}, "read sync state", `SELECT substr(name, 6), CAST(value AS INTEGER) FROM sync_state WHERE name LIKE 'kept %'`)
}

// SyncKeptRecords returns up to limit of the records kept of host after
// index after, in order, cut at loom.MaxSyncPageBytes (one at least).
func (s *Store) SyncKeptRecords(ctx context.Context, host synclog.HostID, after int64, limit int) ([]loom.SyncRecord, error) {
	rows, err := reads{s}.QueryContext(ctx, `SELECT idx, header, body FROM sync_kept WHERE host = ? AND idx > ? ORDER BY idx LIMIT ?`, string(host), after, limit)
	if err != nil {
		return nil, fmt.Errorf("read the records kept of host %s: %w", host, err)
	}
	defer rows.Close()
	var out []loom.SyncRecord
	var size int
	for rows.Next() {
		r := loom.SyncRecord{Host: string(host)}
		if err := rows.Scan(&r.Index, &r.Header, &r.Body); err != nil {
			return nil, fmt.Errorf("read the records kept of host %s: %w", host, err)
		}
		if size += len(r.Header) + len(r.Body); len(out) > 0 && size > loom.MaxSyncPageBytes {
			break
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SyncConflicts returns the conflict forks the store holds, each with
// the host that wrote its first own message ("" when that is not known).
func (s *Store) SyncConflicts(ctx context.Context) ([]sessionstore.Conflict, error) {
	return rowscan.All(ctx, rowsOf{reads{s}}, func(r rowscan.Scanner) (sessionstore.Conflict, error) {
		var c sessionstore.Conflict
		err := r.Scan(&c.ID, &c.Title, &c.Session, &c.SessionTitle, &c.Host)
		return c, err
	}, `SELECT f.id, c.title, f.parent, p.title, coalesce((SELECT sm.host FROM spans sp
			JOIN messages m ON m.session_id = sp.store_id AND m.seq = f.base + 1
			JOIN sync_messages sm ON sm.id = m.id
			WHERE sp.session_id = f.id AND sp.first_seq <= f.base + 1 AND sp.last_seq >= f.base + 1), '')
		FROM sync_forks f JOIN sessions c ON c.id = f.id JOIN sessions p ON p.id = f.parent
		WHERE f.kind = 'conflict' ORDER BY f.id`)
}
