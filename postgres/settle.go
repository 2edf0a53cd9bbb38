package postgres

import (
	"context"
	"time"
)

// SetCompleted implements sessionstore.SettleSteps.
func (w *writeTx) SetCompleted(ctx context.Context, store string, seq int64, at time.Time) (bool, error) {
	tag, err := w.tx.Exec(ctx, `UPDATE messages SET completed_at = $1 WHERE session_id = $2 AND seq = $3`, ms(at), store, seq)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() > 0, nil
}

// SetUpdated implements sessionstore.SettleSteps.
func (w *writeTx) SetUpdated(ctx context.Context, id string, at time.Time) error {
	_, err := w.tx.Exec(ctx, `UPDATE sessions SET updated_at = $1 WHERE id = $2`, ms(at), id)
	return err
}
