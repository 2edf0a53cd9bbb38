package sqlite

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/synclog"
)

// applyForked makes the fork p describes, its row as its writer made it,
// holding its parent's messages up to p.LastID, which the parent must
// hold at p.LastSeq.
func applyForked(ctx context.Context, w writes, st synclog.Stamp, p *synclog.Forked) error {
	row := p.Session
	if cur, err := w.SessionForWrite(ctx, row.ID); err != nil || cur != nil {
		return err
	}
	named, err := w.SessionForWrite(ctx, row.ParentID)
	if err != nil {
		return err
	}
	if named == nil {
		return fmt.Errorf("%w: fork %s of session %s, which this store does not hold", ErrSyncWaits, row.ID, row.ParentID)
	}
	// A fork made from messages a rewind or a conflict moved here is
	// made from the session they moved to.
	parent, err := locateOrWait(ctx, w, named, p.LastSeq, p.LastID)
	if err != nil {
		return err
	}
	plan := &sqlstore.ForkPlan{ID: row.ID, Title: row.Title, Turn: row.ForkTurn, LastSeq: p.LastSeq,
		LastPrompt: row.LastPrompt, SummarySeq: row.SummarySeq}
	stored, k, taken, err := keyless(ctx, w, row)
	if err != nil {
		return err
	}
	plan.Key = stored.Key
	if _, err := sqlstore.CreateFork(ctx, w, parent, plan); err != nil {
		return err
	}
	if err := saveFork(ctx, w, row.ID, parent.ID, p.LastSeq, forkPlain); err != nil {
		return err
	}
	if err := writerRow(ctx, w, st, row); err != nil || !taken {
		return err
	}
	return settleKey(ctx, w, k)
}

// writerRow gives fork row, just made here from its parent as the parent
// is here, the metadata and times its writer's row says it took there
// and then, and stamps them.
func writerRow(ctx context.Context, w writes, st synclog.Stamp, row *loom.Session) error {
	if _, err := w.ExecContext(ctx, `UPDATE sessions SET surface = ?, description = ?, project_id = ?, project_name = ?,
		project_root = ?, cwd = ?, model = ?, provider = ?, profile = ?, git_branch = ?, created_at = ?, updated_at = ?
		WHERE id = ?`, row.Surface, row.Description, row.Project.ID, row.Project.Name, row.Project.Root, row.Cwd, row.Model,
		row.Provider, row.Profile, row.GitBranch, loom.FormatTime(row.CreatedAt), loom.FormatTime(row.UpdatedAt), row.ID); err != nil {
		return fmt.Errorf("fork %s: %w", row.ID, err)
	}
	return saveMeta(ctx, w, row.ID, synclog.NewMeta(row, st))
}

// applyRewound takes the session p names back to message p.KeepID at
// p.KeepSeq, as sqlstore.Rewind does on its writer: every message after
// it here, including ones another host appended meanwhile, moves to the
// fork p.Fork, and the session stores its next messages under p.Store.
func (s *Store) applyRewound(ctx context.Context, w writes, st synclog.Stamp, p *synclog.Rewound) error {
	if f, err := w.SessionForWrite(ctx, p.Fork.ID); err != nil || f != nil {
		return err
	}
	named, err := w.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if named == nil {
		return fmt.Errorf("%w: a rewind of session %s, which this store does not hold", ErrSyncWaits, p.SessionID)
	}
	// A rewind to a message a conflict moved here rewinds the session
	// it moved to.
	cur, err := locateOrWait(ctx, w, named, p.KeepSeq, p.KeepID)
	if err != nil {
		return err
	}
	if err := loom.CheckNotHeld([]*loom.Session{cur}, s.holder.Owner); err != nil {
		return fmt.Errorf("%w: %w", ErrSyncWaits, err)
	}
	// A rewind is work: a trash here that had not seen it is undone
	// after it (worked), so it applies to a session in the trash too.
	live := *cur
	live.DeletedAt = nil
	plan, err := sqlstore.PlanRewind(ctx, &live, loom.RewindOptions{Turn: p.Turn, ID: p.Fork.ID}, w)
	if err != nil {
		return err
	}
	if plan.KeepSeq != p.KeepSeq {
		return fmt.Errorf("rewind of %s to turn %d: turn %d ends at seq %d here, at %d on its writer",
			cur.ID, p.Turn, p.Turn, plan.KeepSeq, p.KeepSeq)
	}
	// The session is as recent as the rewind, or as an append a host
	// made meanwhile, whichever came last, as where the two applied in
	// the other order.
	plan.Fork.Title, plan.Store, plan.At = p.Fork.Title, p.Store, p.At
	if cur.UpdatedAt.After(plan.At) {
		plan.At = cur.UpdatedAt
	}
	if _, err := sqlstore.StoreSplit(ctx, w, cur, plan); err != nil {
		return err
	}
	if err := saveFork(ctx, w, p.Fork.ID, cur.ID, plan.KeepSeq, forkRewind); err != nil {
		return err
	}
	return writerRow(ctx, w, st, p.Fork)
}
