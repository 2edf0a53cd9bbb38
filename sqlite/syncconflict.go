package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/synclog"
)

// moveLocal moves session cur's messages from plan.At on, which lose to
// another host's chain, to the conflict fork plan.Fork, as a rewind
// moves a session's later turns to its fork (nothing is copied), with
// the forks made from that part, and returns cur as it is after: ending
// at plan.At-1, to take the other chain. A session a live process here
// is writing is not moved under it: the record waits.
func (s *Store) moveLocal(ctx context.Context, w writes, cur *loom.Session, plan synclog.Plan) (*loom.Session, error) {
	if err := loom.CheckNotHeld([]*loom.Session{cur}, s.holder.Owner); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyncWaits, err)
	}
	rp, err := sqlstore.PlanConflictMove(ctx, cur, plan.At, plan.Fork, w)
	if err != nil {
		return nil, err
	}
	// The session's time stays: the append that takes the place of the
	// moved messages moves it on.
	rp.At = cur.UpdatedAt
	if _, err := sqlstore.StoreSplit(ctx, w, cur, rp); err != nil {
		return nil, fmt.Errorf("move the conflicting messages of %s: %w", cur.ID, err)
	}
	first, err := spanMessages(ctx, w, rp.Fork.ID, plan.At, plan.At, "", false, 0)
	if err != nil {
		return nil, err
	}
	if len(first) == 0 {
		return nil, fmt.Errorf("conflict fork %s holds no message at seq %d", rp.Fork.ID, plan.At)
	}
	if err := conflictRow(ctx, w, cur.ID, rp.Fork.ID, plan.At, first[0].CreatedAt); err != nil {
		return nil, err
	}
	// Forks made from the part that moved follow it (the conflict fork
	// itself shares messages 1 to plan.At-1: base plan.At-1).
	for _, q := range []string{
		`UPDATE sessions SET parent_id = ?1 WHERE id IN (SELECT id FROM sync_forks WHERE parent = ?2 AND base >= ?3)`,
		`UPDATE sync_forks SET parent = ?1 WHERE parent = ?2 AND base >= ?3`,
	} {
		if _, err := w.ExecContext(ctx, q, rp.Fork.ID, cur.ID, plan.At); err != nil {
			return nil, fmt.Errorf("move the forks of %s: %w", cur.ID, err)
		}
	}
	return w.SessionForWrite(ctx, cur.ID)
}

// forkIncoming makes conflict fork plan.Fork of session cur, holding
// cur's messages 1 to plan.At-1, for another host's chain, which loses
// to cur's and starts with message first, and returns it.
func forkIncoming(ctx context.Context, w writes, cur *loom.Session, plan synclog.Plan, first *loom.Message) (*loom.Session, error) {
	fp, err := sqlstore.PlanConflictFork(ctx, cur, plan.At, plan.Fork, w)
	if err != nil {
		return nil, err
	}
	if _, err := sqlstore.CreateFork(ctx, w, cur, fp); err != nil {
		return nil, fmt.Errorf("conflict fork of %s: %w", cur.ID, err)
	}
	if err := conflictRow(ctx, w, cur.ID, fp.ID, plan.At, first.CreatedAt); err != nil {
		return nil, err
	}
	return w.SessionForWrite(ctx, fp.ID)
}

// conflictRow gives conflict fork id of session parent, whose own
// messages start at seq at with one created at created, what every host
// gives it whenever it makes it: it starts and was last active when that
// message was made, and follows parent's metadata (synclog.Meta.Inherit),
// archived state included, until its own is set.
func conflictRow(ctx context.Context, w writes, parent, id string, at int64, created time.Time) error {
	m, err := loadMeta(ctx, w, parent)
	if err != nil {
		return err
	}
	t := loom.FormatTime(created)
	if _, err := w.ExecContext(ctx, `UPDATE sessions SET created_at = ?1, updated_at = ?1, key = NULL,
		archived_at = (SELECT archived_at FROM sessions WHERE id = ?2) WHERE id = ?3`, t, parent, id); err != nil {
		return fmt.Errorf("conflict fork %s: %w", id, err)
	}
	if err := saveMeta(ctx, w, id, m.Inherit()); err != nil {
		return err
	}
	return saveFork(ctx, w, id, parent, at-1, forkConflict)
}
