package sessionstore

import (
	"context"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// SettleSteps are the writes of the times an import settles
// (loom.SettledTimes).
type SettleSteps interface {
	// SetCompleted sets the completion time of row seq of store to at,
	// and reports whether there is such a row.
	SetCompleted(ctx context.Context, store string, seq int64, at time.Time) (bool, error)
	// SetUpdated sets the updated time of session id to at.
	SetUpdated(ctx context.Context, id string, at time.Time) error
}

// settleTimes is an import's change of session id's times to t, inside
// tx, recorded in log: message seq (when t completes one) completes at
// t.CompletedAt and the session is as recent as t.UpdatedAt, each where
// that is later than what the store holds (a time settles forward only).
// A message the session does not store itself (a fork's inherited one)
// keeps its time. The record names only the times that moved.
func settleTimes(ctx context.Context, tx Tx, log *SyncLog, id string, seq int64, t loom.SettledTimes) error {
	if err := tx.BeginUpdate(ctx, id); err != nil {
		return err
	}
	rec := &synclog.TimesSettled{SessionID: id}
	if t.CompletedAt != nil {
		m, err := tx.Message(ctx, id, seq)
		if err != nil {
			return err
		}
		if m == nil {
			return loom.Errorf(loom.ENOTFOUND, "session %s holds no message %d", id, seq)
		}
		if later(m.CompletedAt, *t.CompletedAt) {
			ok, err := tx.SetCompleted(ctx, id, seq, *t.CompletedAt)
			if err != nil {
				return fmt.Errorf("settle message %d of %s: %w", seq, id, err)
			}
			if ok {
				at := *t.CompletedAt
				rec.Seq, rec.MessageID, rec.CompletedAt = seq, m.ID, &at
			}
		}
	}
	if t.UpdatedAt != nil {
		cur, err := tx.SessionForUpdate(ctx, id)
		if err != nil {
			return err
		}
		if later(&cur.UpdatedAt, *t.UpdatedAt) {
			if err := tx.SetUpdated(ctx, id, *t.UpdatedAt); err != nil {
				return fmt.Errorf("settle %s: %w", id, err)
			}
			at := *t.UpdatedAt
			rec.At = &at
		}
	}
	return recordIn(ctx, log, func(*SyncLog) (synclog.Payload, error) {
		if rec.CompletedAt == nil && rec.At == nil {
			return nil, nil
		}
		return rec, nil
	})
}

// applySettled applies times settled by another host: each time moves
// only forward, as where it was settled, so that every host ends with
// the latest of them whatever order it applies them in. The message's
// time is set in the session that holds it (the one named, or the one a
// rewind or a conflict moved it to).
func applySettled(ctx context.Context, tx Tx, p *synclog.TimesSettled) error {
	if p.CompletedAt != nil {
		m, store, err := heldMessage(ctx, tx, p.SessionID, p.Seq, p.MessageID)
		if err != nil {
			return err
		}
		if later(m.CompletedAt, *p.CompletedAt) {
			if _, err := tx.SetCompleted(ctx, store, p.Seq, *p.CompletedAt); err != nil {
				return fmt.Errorf("settle message %d of %s: %w", p.Seq, p.SessionID, err)
			}
		}
	}
	if p.At == nil {
		return nil
	}
	cur, err := tx.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("%w: times of session %s, which this store does not hold", ErrWaits, p.SessionID)
	}
	if later(&cur.UpdatedAt, *p.At) {
		return tx.SetUpdated(ctx, cur.ID, *p.At)
	}
	return nil
}

// later reports whether at is later than held (nil: no time yet), to
// the millisecond the stores keep.
func later(held *time.Time, at time.Time) bool {
	return held == nil || at.Truncate(time.Millisecond).After(held.Truncate(time.Millisecond))
}
