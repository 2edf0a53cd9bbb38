package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// Usage implements loom.Store with query.UsageReport's queries, on the
// reader pool.
func (s *Store) Usage(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error) {
	return query.UsageReport(dialect, f, func(group, q string, args []any) ([]loom.UsageRow, error) {
		return rowscan.All(ctx, rowsOf{s.reader}, rowscan.UsageRow(group), q, args...)
	})
}

// UsageSlices implements loom.Store: from the roll-up (usage_slices),
// brought up to date first, when it can answer f; from the messages
// otherwise, and in a store open read-only whose roll-up is behind.
func (s *Store) UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	current := false
	if query.Rollupable(f) {
		var err error
		if current, err = s.refreshUsage(ctx); err != nil {
			return nil, err
		}
	}
	return query.ReadUsageSlices(dialect, f, current, func(q string, args []any) ([]loom.UsageSlice, error) {
		return rowscan.All(ctx, rowsOf{s.reader}, rowscan.UsageSlice, q, args...)
	})
}

// refreshUsage brings the roll-up up to date with what writes marked:
// the stale sessions summed again whole, then the pending rows added to
// the slices of the other sessions that read them. It reports whether
// the roll-up is current: false in a store open read-only with marks
// left.
func (s *Store) refreshUsage(ctx context.Context) (bool, error) {
	var marked bool
	if err := s.reader.QueryRowContext(ctx,
		`SELECT EXISTS (SELECT 1 FROM usage_stale) OR EXISTS (SELECT 1 FROM usage_pending)`).Scan(&marked); err != nil {
		return false, fmt.Errorf("usage roll-up: %w", err)
	}
	if !marked {
		return true, nil
	}
	if s.readOnly {
		return false, nil
	}
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`DELETE FROM usage_slices WHERE session_id IN (SELECT session_id FROM usage_stale)`,
			`INSERT INTO usage_slices (` + query.RollupColumns + `) ` + query.RollupStale(dialect, "usage_stale"),
			`INSERT INTO usage_slices (` + query.RollupColumns + `) ` + query.RollupPending(dialect, "usage_pending", "usage_stale") +
				query.RollupAdd("min", "max"),
			`DELETE FROM usage_pending`,
			`DELETE FROM usage_stale`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("usage roll-up: %w", err)
	}
	return true, nil
}

// activityParts reads bodies' parts with SQLite's JSON functions.
var activityParts = query.Parts{
	From:   ", json_each(b.parts) p",
	Type:   "json_extract(p.value, '$.type')",
	Name:   "json_extract(p.value, '$.name')",
	Status: "json_extract(p.value, '$.status')",
}

// Activity implements loom.ActivityReader on the reader pool.
func (s *Store) Activity(ctx context.Context, f loom.ActivityFilter) (*loom.Activity, error) {
	return query.ReadActivity(ctx, rowsOf{s.reader}, dialect, activityParts, f)
}
