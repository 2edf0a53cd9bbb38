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
	parent, err := w.SessionForWrite(ctx, row.ParentID)
	if err != nil {
		return err
	}
	if parent == nil {
		return fmt.Errorf("%w: fork %s of session %s, which this store does not hold", ErrSyncWaits, row.ID, row.ParentID)
	}
	if p.LastSeq > 0 {
		last, err := w.MessageID(ctx, parent.ID, p.LastSeq)
		if err != nil {
			return err
		}
		if last != p.LastID {
			return &NotAppliedError{Type: p.Type(), Why: fmt.Sprintf(
				"session %s holds no message %s at seq %d, where fork %s ends (a rewind or a conflict moved it, or it is not here yet)",
				parent.ID, p.LastID, p.LastSeq, row.ID)}
		}
	}
	spans, err := w.Spans(ctx, parent.ID)
	if err != nil {
		return err
	}
	plan := &sqlstore.ForkPlan{ID: row.ID, Key: row.Key, Title: row.Title, Turn: row.ForkTurn, LastSeq: p.LastSeq,
		LastPrompt: row.LastPrompt, SummarySeq: row.SummarySeq}
	if _, err := w.CreateFork(ctx, parent, plan, sqlstore.InheritSpans(spans, p.LastSeq, row.ID)); err != nil {
		if loom.ErrorCode(err) == loom.ECONFLICT {
			return &NotAppliedError{Type: p.Type(), Why: fmt.Sprintf("another session here has key %q (two machines gave one key to two sessions)", row.Key)}
		}
		return err
	}
	return writerRow(ctx, w, st, row)
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
	cur, err := w.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("%w: a rewind of session %s, which this store does not hold", ErrSyncWaits, p.SessionID)
	}
	if err := loom.CheckNotHeld([]*loom.Session{cur}, s.holder.Owner); err != nil {
		return fmt.Errorf("%w: %w", ErrSyncWaits, err)
	}
	if err := keptHere(ctx, w, p.Type(), cur, p.KeepSeq, p.KeepID); err != nil {
		return err
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
	plan.Fork.Title, plan.Store, plan.At = p.Fork.Title, p.Store, p.At
	spans, err := w.Spans(ctx, cur.ID)
	if err != nil {
		return err
	}
	if _, err := w.StoreRewind(ctx, cur, plan,
		sqlstore.InheritSpans(spans, plan.Fork.LastSeq, plan.Fork.ID), sqlstore.InheritSpans(spans, plan.KeepSeq, plan.Store)); err != nil {
		return err
	}
	return writerRow(ctx, w, st, p.Fork)
}

// keptHere checks that session cur holds message mid at seq, where a
// record of type t says its writer's copy held it: if the message is
// not here at all, the record that appended it has not arrived yet; if
// it is somewhere else, a rewind or a conflict moved it.
func keptHere(ctx context.Context, w writes, t synclog.Type, cur *loom.Session, seq int64, mid string) error {
	id, err := w.MessageID(ctx, cur.ID, seq)
	if err != nil || id == mid {
		return err
	}
	// Every message a record brought, or this store recorded, has its
	// stamp; sync_messages is keyed by id, where messages is not.
	var held bool
	if err := w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sync_messages WHERE id = ?)`, mid).Scan(&held); err != nil {
		return fmt.Errorf("find message %s: %w", mid, err)
	}
	if !held {
		return fmt.Errorf("%w: message %s of session %s, which this store does not hold", ErrSyncWaits, mid, cur.ID)
	}
	return &NotAppliedError{Type: t, Why: fmt.Sprintf(
		"session %s holds no message %s at seq %d (a rewind or a conflict moved it)", cur.ID, mid, seq)}
}
