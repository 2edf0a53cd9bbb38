package memstore

import (
	"context"
	"time"
)

// SetCompleted implements sessionstore.SettleSteps.
func (t *tx) SetCompleted(ctx context.Context, store string, seq int64, at time.Time) (bool, error) {
	r, ok := t.st.rows[store][seq]
	if !ok {
		return false, nil
	}
	done := stored(at)
	r.completed = &done
	t.st.setRow(store, seq, r)
	return true, nil
}

// SetUpdated implements sessionstore.SettleSteps.
func (t *tx) SetUpdated(ctx context.Context, id string, at time.Time) error {
	if x, ok := t.st.sessions[id]; ok {
		x.UpdatedAt = at
		return t.st.put(x)
	}
	return nil
}
