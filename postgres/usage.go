package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// Usage implements loom.Store with query.UsageReport's queries: all three
// are grouped inside the database.
func (s *Store) Usage(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error) {
	if !storable(f.UserID, f.ProjectID, f.SessionID) {
		return &loom.UsageReport{}, nil
	}
	return query.UsageReport(dialect, f, func(group, q string, args []any) ([]loom.UsageRow, error) {
		return rowscan.All(ctx, rowsOf{s.pool}, rowscan.UsageRow(group), q, args...)
	})
}

// UsageSlices implements loom.Store: from the roll-up (usage_slices),
// brought up to date first, when it can answer f; from the messages
// otherwise.
func (s *Store) UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	if !storable(f.UserID, f.ProjectID, f.Surface) {
		return nil, nil
	}
	current := false
	if query.Rollupable(f) {
		switch err := s.refreshUsage(ctx); pgCode(err) {
		case "":
			if err != nil {
				return nil, err
			}
			current = true
		case "42501", "25006":
			// A role that may only read (or a standby) cannot bring
			// the roll-up up to date: it is reported from the messages.
		default:
			return nil, err
		}
	}
	return query.ReadUsageSlices(dialect, f, current, func(q string, args []any) ([]loom.UsageSlice, error) {
		return rowscan.All(ctx, rowsOf{s.pool}, rowscan.UsageSlice, q, args...)
	})
}

// staleSessions is the stale sessions of a refresh, each once.
const staleSessions = `(SELECT DISTINCT session_id FROM usage_stale)`

// refreshUsage brings the roll-up up to date with what writes marked:
// the stale sessions summed again whole, then the pending rows added to
// the slices of the other sessions that read them. It works on one
// snapshot (repeatable read) and removes only the marks that snapshot
// holds, so a write that commits meanwhile stays marked for the next
// report. The table lock, taken before the snapshot, waits for writes
// that changed slices' sessions and keeps two refreshes apart.
func (s *Store) refreshUsage(ctx context.Context) error {
	var marked bool
	if err := s.pool.QueryRow(ctx,
		`SELECT EXISTS (SELECT 1 FROM usage_stale) OR EXISTS (SELECT 1 FROM usage_pending)`).Scan(&marked); err != nil {
		return fmt.Errorf("usage roll-up: %w", err)
	}
	if !marked {
		return nil
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return fmt.Errorf("usage roll-up: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for _, q := range []string{
		`LOCK TABLE usage_slices IN SHARE ROW EXCLUSIVE MODE`,
		`DELETE FROM usage_slices WHERE session_id IN ` + staleSessions,
		`INSERT INTO usage_slices (` + query.RollupColumns + `) ` + query.RollupStale(dialect, staleSessions),
		`INSERT INTO usage_slices (` + query.RollupColumns + `) ` + query.RollupPending(dialect, "usage_pending", "usage_stale") +
			query.RollupAdd("LEAST", "GREATEST"),
		`DELETE FROM usage_pending`,
		`DELETE FROM usage_stale`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("usage roll-up: %w", serverError(err))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("usage roll-up: %w", serverError(err))
	}
	return nil
}

// activityParts reads bodies' parts (json) with PostgreSQL's JSON functions.
var activityParts = query.Parts{
	From:   "CROSS JOIN LATERAL json_array_elements(b.parts) p(value)",
	Type:   "(p.value->>'type')",
	Name:   "(p.value->>'name')",
	Status: "(p.value->>'status')",
}

// Activity implements loom.ActivityReader on the pool.
func (s *Store) Activity(ctx context.Context, f loom.ActivityFilter) (*loom.Activity, error) {
	return query.ReadActivity(ctx, rowsOf{s.pool}, dialect, activityParts, f)
}
