package sqlite

import (
	"context"
	"time"

	"github.com/loomhq/loom"
)

// SetCompleted implements sessionstore.SettleSteps.
func (w writes) SetCompleted(ctx context.Context, store string, seq int64, at time.Time) (bool, error) {
	res, err := w.ExecContext(ctx, `UPDATE messages SET completed_at = ? WHERE session_id = CAST(? AS TEXT) AND seq = ?`,
		loom.FormatTime(at), store, seq)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// SetUpdated implements sessionstore.SettleSteps.
func (w writes) SetUpdated(ctx context.Context, id string, at time.Time) error {
	_, err := w.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = CAST(? AS TEXT)`, loom.FormatTime(at), id)
	return err
}
