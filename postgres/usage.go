package postgres

import (
	"context"

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

// UsageSlices implements loom.Store with query.UsageSlices.
func (s *Store) UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	if !storable(f.UserID, f.ProjectID, f.Surface) {
		return nil, nil
	}
	q, args := query.UsageSlices(dialect, f)
	return rowscan.All(ctx, rowsOf{s.pool}, rowscan.UsageSlice, q, args...)
}
