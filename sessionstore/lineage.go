package sessionstore

import (
	"context"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// LineageSteps keep where sessions split (forks, rewinds, conflict
// forks) and which were purged, as sync's lineage and purge rules read
// them.
type LineageSteps interface {
	// SaveFork keeps that fork id, of kind, shares parent's messages 1
	// to base.
	SaveFork(ctx context.Context, id, parent string, base int64, kind ForkKind) error
	// ForksOf returns the forks of parent of the kinds given, by base,
	// then id.
	ForksOf(ctx context.Context, parent string, kinds ...ForkKind) ([]string, error)
	// MoveForks makes the forks of parent whose base is at least from
	// forks of to.
	MoveForks(ctx context.Context, parent, to string, from int64) error
	// TwinFork makes session id, a fork of parent titled title at turn
	// turn, that reads every message session of reads, with of's
	// counters and usage.
	TwinFork(ctx context.Context, of, parent, id, title string, turn int) error
	// Purged reports whether session id was purged; MarkPurged keeps
	// that it was.
	Purged(ctx context.Context, id string) (bool, error)
	MarkPurged(ctx context.Context, id string) error
}

// applyForked makes the fork p describes, its row as its writer made it,
// holding its parent's messages up to p.LastID, which the parent must
// hold at p.LastSeq.
func applyForked(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.Forked) error {
	row := p.Session
	if cur, err := tx.SessionForWrite(ctx, row.ID); err != nil || cur != nil {
		return err
	}
	named, err := tx.SessionForWrite(ctx, row.ParentID)
	if err != nil {
		return err
	}
	if named == nil {
		return fmt.Errorf("%w: fork %s of session %s, which this store does not hold", ErrWaits, row.ID, row.ParentID)
	}
	// A fork made from messages a rewind or a conflict moved here is
	// made from the session they moved to.
	parent, err := locateOrWait(ctx, tx, named, p.LastSeq, p.LastID)
	if err != nil {
		return err
	}
	plan := &ForkPlan{ID: row.ID, Title: row.Title, Turn: row.ForkTurn, LastSeq: p.LastSeq,
		LastPrompt: row.LastPrompt, SummarySeq: row.SummarySeq}
	stored, k, taken, err := keyless(ctx, tx, row)
	if err != nil {
		return err
	}
	plan.Key = stored.Key
	if _, err := createFork(ctx, tx, parent, plan); err != nil {
		return err
	}
	if err := tx.SaveFork(ctx, row.ID, parent.ID, p.LastSeq, plainFork); err != nil {
		return err
	}
	if err := writerRow(ctx, tx, st, row); err != nil || !taken {
		return err
	}
	return settleKey(ctx, tx, k)
}

// writerRow gives fork row, just made here from its parent as the parent
// is here, the metadata and times its writer's row says it took there
// and then, and stamps them.
func writerRow(ctx context.Context, tx interface {
	MergeSteps
	StampSteps
}, st synclog.Stamp, row *loom.Session) error {
	if err := tx.SetWriterRow(ctx, row); err != nil {
		return fmt.Errorf("fork %s: %w", row.ID, err)
	}
	return saveMeta(ctx, tx, row.ID, newMeta(row, st))
}

// applyRewound takes the session p names back to message p.KeepID at
// p.KeepSeq, as Rewind does on its writer: every message after
// it here, including ones another host appended meanwhile, moves to the
// fork p.Fork, and the session stores its next messages under p.Store.
func applyRewound(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.Rewound) error {
	if f, err := tx.SessionForWrite(ctx, p.Fork.ID); err != nil || f != nil {
		return err
	}
	named, err := tx.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if named == nil {
		return fmt.Errorf("%w: a rewind of session %s, which this store does not hold", ErrWaits, p.SessionID)
	}
	// A rewind to a message a conflict moved here rewinds the session
	// it moved to.
	cur, err := locateOrWait(ctx, tx, named, p.KeepSeq, p.KeepID)
	if err != nil {
		return err
	}
	if err := loom.CheckNotHeld([]*loom.Session{cur}, tx.Owner()); err != nil {
		return fmt.Errorf("%w: %w", ErrWaits, err)
	}
	if int64(cur.MessageCount) == p.KeepSeq {
		if done, err := twinRewind(ctx, tx, st, cur, p); err != nil || done {
			return err
		}
	}
	// A rewind is work: a trash here that had not seen it is undone
	// after it (worked), so it applies to a session in the trash too.
	live := *cur
	live.DeletedAt = nil
	plan, err := planRewind(ctx, &live, loom.RewindOptions{Turn: p.Turn, ID: p.Fork.ID}, tx)
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
	if _, err := storeSplit(ctx, tx, cur, plan); err != nil {
		return err
	}
	// Forks made from the part that moved follow it, as where the fork
	// was applied after the rewind, from the session it moved to.
	if err := tx.MoveForks(ctx, cur.ID, p.Fork.ID, plan.KeepSeq+1); err != nil {
		return err
	}
	if err := tx.SaveFork(ctx, p.Fork.ID, cur.ID, plan.KeepSeq, rewindFork); err != nil {
		return err
	}
	return writerRow(ctx, tx, st, p.Fork)
}

// twinRewind applies rewind p of session cur, which ends at the message
// p keeps: another rewind to that message, made on another host at the
// same time, took the later turns here first. p's fork is then made
// beside that rewind's, reading the same turns, a fork of cur: so the
// two rewinds end alike in either order, each with a fork that holds the
// turns after the message. It reports whether it found that rewind.
func twinRewind(ctx context.Context, tx Tx, st synclog.Stamp, cur *loom.Session, p *synclog.Rewound) (bool, error) {
	forks, err := tx.ForksOf(ctx, cur.ID, rewindFork)
	if err != nil {
		return false, err
	}
	for _, f := range forks {
		other, err := tx.SessionForWrite(ctx, f)
		if err != nil {
			return false, err
		}
		if other == nil || int64(other.MessageCount) <= p.KeepSeq {
			continue
		}
		if id, err := tx.MessageID(ctx, f, p.KeepSeq); err != nil || id != p.KeepID {
			return false, err
		}
		if err := tx.TwinFork(ctx, f, cur.ID, p.Fork.ID, p.Fork.Title, p.Turn); err != nil {
			return false, fmt.Errorf("rewind of %s: %w", cur.ID, err)
		}
		if err := tx.SaveFork(ctx, p.Fork.ID, cur.ID, p.KeepSeq, rewindFork); err != nil {
			return false, err
		}
		if err := tx.Touch(ctx, cur.ID, p.At); err != nil {
			return false, err
		}
		return true, writerRow(ctx, tx, st, p.Fork)
	}
	return false, nil
}

// moveLocal moves session cur's messages from plan.At on, which lose to
// another host's chain, to the conflict fork plan.Fork, as a rewind
// moves a session's later turns to its fork (nothing is copied), with
// the forks made from that part, and returns cur as it is after: ending
// at plan.At-1, to take the other chain. A session a live process here
// is writing is not moved under it: the record waits.
func moveLocal(ctx context.Context, tx Tx, cur *loom.Session, plan Plan) (*loom.Session, error) {
	if err := loom.CheckNotHeld([]*loom.Session{cur}, tx.Owner()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWaits, err)
	}
	rp, err := planConflictMove(ctx, cur, plan.At, plan.Fork, tx)
	if err != nil {
		return nil, err
	}
	// The session's time stays: the append that takes the place of the
	// moved messages moves it on.
	rp.At = cur.UpdatedAt
	if _, err := storeSplit(ctx, tx, cur, rp); err != nil {
		return nil, fmt.Errorf("move the conflicting messages of %s: %w", cur.ID, err)
	}
	first, err := tx.Messages(ctx, rp.Fork.ID, plan.At, plan.At)
	if err != nil {
		return nil, err
	}
	if len(first) == 0 {
		return nil, fmt.Errorf("conflict fork %s holds no message at seq %d", rp.Fork.ID, plan.At)
	}
	if err := conflictRow(ctx, tx, cur.ID, rp.Fork.ID, plan.At, first[0].CreatedAt); err != nil {
		return nil, err
	}
	// Forks made from the part that moved follow it (the conflict fork
	// itself shares messages 1 to plan.At-1: base plan.At-1).
	if err := tx.MoveForks(ctx, cur.ID, rp.Fork.ID, plan.At); err != nil {
		return nil, fmt.Errorf("move the forks of %s: %w", cur.ID, err)
	}
	return tx.SessionForWrite(ctx, cur.ID)
}

// forkIncoming makes conflict fork plan.Fork of session cur, holding
// cur's messages 1 to plan.At-1, for another host's chain, which loses
// to cur's and starts with message first, and returns it.
func forkIncoming(ctx context.Context, tx Tx, cur *loom.Session, plan Plan, first *loom.Message) (*loom.Session, error) {
	fp, err := planConflictFork(ctx, cur, plan.At, plan.Fork, tx)
	if err != nil {
		return nil, err
	}
	if _, err := createFork(ctx, tx, cur, fp); err != nil {
		return nil, fmt.Errorf("conflict fork of %s: %w", cur.ID, err)
	}
	if err := conflictRow(ctx, tx, cur.ID, fp.ID, plan.At, first.CreatedAt); err != nil {
		return nil, err
	}
	return tx.SessionForWrite(ctx, fp.ID)
}

// conflictRow gives conflict fork id of session parent, whose own
// messages start at seq at with one created at created, what every host
// gives it whenever it makes it: it starts and was last active when that
// message was made, and follows parent's metadata (Meta.Inherit),
// archived state included, until its own is set.
func conflictRow(ctx context.Context, tx Tx, parent, id string, at int64, created time.Time) error {
	m, err := loadMeta(ctx, tx, parent)
	if err != nil {
		return err
	}
	if err := tx.SetConflictRow(ctx, parent, id, created); err != nil {
		return fmt.Errorf("conflict fork %s: %w", id, err)
	}
	if err := saveMeta(ctx, tx, id, m.Inherit()); err != nil {
		return err
	}
	return tx.SaveFork(ctx, id, parent, at-1, ConflictFork)
}

// maxRoute bounds how many sessions locate looks in.
const maxRoute = 10_000

// locate returns the session that holds message mid at seq, for a record
// of session named that names the message: named when it holds it, else
// the nearest of the sessions a rewind or a conflict moved named's
// messages to, and theirs, breadth first (docs/sync.md, "Concurrent
// appends"). It returns nil when none does: the record that brings the
// message has not been applied here yet. seq 0 names no message, and is
// named's.
func locate(ctx context.Context, tx Tx, named *loom.Session, seq int64, mid string) (*loom.Session, error) {
	if seq < 1 {
		return named, nil
	}
	queue := []string{named.ID}
	seen := map[string]bool{named.ID: true}
	for len(queue) > 0 && len(seen) <= maxRoute {
		id := queue[0]
		queue = queue[1:]
		got, err := tx.MessageID(ctx, id, seq)
		if err != nil {
			return nil, fmt.Errorf("find message %s: %w", mid, err)
		}
		if got == mid {
			if id == named.ID {
				return named, nil
			}
			return tx.SessionForWrite(ctx, id)
		}
		moved, err := tx.ForksOf(ctx, id, rewindFork, ConflictFork)
		if err != nil {
			return nil, fmt.Errorf("find message %s: %w", mid, err)
		}
		for _, m := range moved {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	return nil, nil
}

// locateOrWait is locate, where finding no session is ErrWaits for the
// record that names message mid at seq of session named.
func locateOrWait(ctx context.Context, tx Tx, named *loom.Session, seq int64, mid string) (*loom.Session, error) {
	s, err := locate(ctx, tx, named, seq, mid)
	if err == nil && s == nil {
		err = fmt.Errorf("%w: message %s at seq %d, which neither session %s nor a session its messages moved to holds here yet",
			ErrWaits, mid, seq, named.ID)
	}
	return s, err
}
