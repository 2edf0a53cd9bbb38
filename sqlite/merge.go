package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// mergeStep is how many pages of the search index one step of MergeIndex
// merges at most, in its own transaction.
const mergeStep = 2000

// MergeIndex implements loom.IndexMerger with FTS5's merge command, a
// negative page count merging the segments of every level: each step is
// a transaction of its own, and the merge is done when a step writes
// nothing (FTS5's way of telling, in total_changes).
func (s *Store) MergeIndex(ctx context.Context) error {
	for {
		var done bool
		err := s.withTx(ctx, func(tx *sql.Tx) error {
			var before, after int64
			if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO bodies_fts (bodies_fts, rank) VALUES ('merge', ?)`, -mergeStep); err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
				return err
			}
			done = after-before < 2
			return nil
		})
		if err != nil {
			return fmt.Errorf("merge the search index: %w", err)
		}
		if done {
			return nil
		}
	}
}
