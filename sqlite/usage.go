package sqlite

import (
	"context"

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

// UsageSlices implements loom.Store with query.UsageSlices, on the
// reader pool.
func (s *Store) UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	q, args := query.UsageSlices(dialect, f)
	return rowscan.All(ctx, rowsOf{s.reader}, rowscan.UsageSlice, q, args...)
}
