package sessionstore

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// applyCreated creates the session p's row describes, unless it is here
// already. When another session here has its key, the earlier claim
// keeps it (settleKey).
func applyCreated(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.SessionCreated) error {
	cur, err := tx.SessionForWrite(ctx, p.Session.ID)
	if err != nil || cur != nil {
		return err
	}
	row, k, taken, err := keyless(ctx, tx, p.Session)
	if err != nil {
		return err
	}
	if err := tx.CreateSession(ctx, row); err != nil {
		return err
	}
	if err := saveMeta(ctx, tx, p.Session.ID, newMeta(p.Session, st)); err != nil {
		return err
	}
	if taken {
		return settleKey(ctx, tx, k)
	}
	return nil
}

// applyAppend appends p's messages, keeping their ids, seq and times,
// to the session that holds the message p follows: the session p names,
// or the one a rewind or a conflict moved that message to (locate). Where
// that session holds other messages from p's seq on, two hosts appended
// at once, and one chain continues in a conflict fork (PlanAppend).
func applyAppend(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.MessagesAppended) error {
	named, err := tx.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if named == nil {
		return fmt.Errorf("%w: messages for session %s, which this store does not hold", ErrWaits, p.SessionID)
	}
	cur, err := locateOrWait(ctx, tx, named, p.FirstSeq-1, p.PrevID)
	if err != nil {
		return err
	}
	return appendTo(ctx, tx, st, p, named, cur, 0)
}

// appendTo applies append record p, of session named, to session cur,
// which holds the message p follows, as PlanAppend says; depth is how
// many conflict forks it went down through.
func appendTo(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.MessagesAppended, named, cur *loom.Session, depth int) error {
	win, err := appendWindow(ctx, tx, cur, p)
	if err != nil {
		return err
	}
	plan := PlanAppend(win, st, p)
	switch plan.Action {
	case Applied:
		return nil
	case appendAfter:
		return appendMessages(ctx, tx, st, p, plan.Skip, named, cur)
	case MoveLocal:
		kept, err := moveLocal(ctx, tx, cur, plan)
		if err != nil {
			return err
		}
		return appendMessages(ctx, tx, st, p, plan.Skip, named, kept)
	case ForkIncoming:
		if depth >= maxConflictDepth {
			return fmt.Errorf("append to %s: more than %d conflict forks deep", cur.ID, maxConflictDepth)
		}
		f, err := tx.SessionForWrite(ctx, plan.Fork)
		if err == nil && f == nil {
			f, err = forkIncoming(ctx, tx, cur, plan, p.Messages[plan.Skip])
		}
		if err != nil {
			return err
		}
		return appendTo(ctx, tx, st, p, named, f, depth+1)
	}
	return fmt.Errorf("append to %s: it holds %d messages and not message %s at seq %d", cur.ID, cur.MessageCount, p.PrevID, p.FirstSeq-1)
}

// appendMessages stores p's messages from skip on in session cur, which
// ends where they start. A record makes the session it names, named, as
// recent as its time, and not a session it went to because a rewind or a
// conflict moved what it follows there (so hosts that applied the move
// and the record in either order agree on both sessions' times).
func appendMessages(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.MessagesAppended, skip int, named, cur *loom.Session) error {
	// ApplyAppend numbers the messages it is given: copies, so that the
	// record stays as decoded.
	msgs := make([]*loom.Message, 0, len(p.Messages)-skip)
	for _, m := range p.Messages[skip:] {
		c := *m
		msgs = append(msgs, &c)
	}
	was := cur.UpdatedAt
	cur.ApplyAppend(p.At, msgs...)
	routed := cur.ID != named.ID
	if routed || cur.UpdatedAt.Before(was) {
		// Never back in time: a change stamped later may have been
		// applied first.
		cur.UpdatedAt = was
	}
	if err := tx.StoreAppend(ctx, cur, msgs); err != nil {
		return fmt.Errorf("append to %s: %w", cur.ID, err)
	}
	if err := stampMessages(ctx, tx, st, msgs); err != nil {
		return err
	}
	if routed {
		if err := tx.Touch(ctx, named.ID, p.At); err != nil {
			return err
		}
	}
	return appendUnarchives(ctx, tx, cur.ID, st)
}

// appendWindow reads the rows of session cur that PlanAppend needs for
// record p.
func appendWindow(ctx context.Context, tx interface {
	MergeSteps
	StampSteps
}, cur *loom.Session, p *synclog.MessagesAppended) (AppendWindow, error) {
	// cur holds p.PrevID at p.FirstSeq-1: locate found it there, and a
	// conflict fork shares the messages before its own with its parent.
	win := AppendWindow{Count: int64(cur.MessageCount), Prev: p.PrevID}
	if win.Count < p.FirstSeq {
		return win, nil
	}
	last := min(win.Count, p.FirstSeq+int64(len(p.Messages))-1)
	held, err := tx.Messages(ctx, cur.ID, p.FirstSeq, last)
	if err != nil {
		return win, err
	}
	for _, m := range held {
		st, err := tx.MessageStamp(ctx, m.ID, false)
		if err != nil {
			return win, err
		}
		win.Next = append(win.Next, Entry{ID: m.ID, Stamp: st})
	}
	return win, nil
}

// appendUnarchives merges what an append does to the archived state
// (StoreAppend takes a session out of the archive) into the metadata of
// session id: an archive stamped after the append keeps the session
// archived, whichever arrived first.
func appendUnarchives(ctx context.Context, tx interface {
	MergeSteps
	StampSteps
}, id string, st synclog.Stamp) error {
	m, err := loadMeta(ctx, tx, id)
	if err != nil {
		return err
	}
	if !m.Apply(st, &synclog.SessionChanged{SessionID: id, Archive: &synclog.Archive{}}, 0) && m.Archived.Value != nil {
		if err := tx.SetColumns(ctx, id, Columns{Archive: true, Archived: m.Archived.Value}); err != nil {
			return fmt.Errorf("archive %s: %w", id, err)
		}
	}
	return saveMeta(ctx, tx, id, m)
}

// applyImported imports p's sessions that are not here, with their
// messages as they are. A session here already is the same source
// imported on this machine too (an imported session's id is derived from
// its source): its row merges by last writer per field
// (rowChange), and its messages as an append from seq 1
// (importAsAppend): the ones it holds are left alone, the ones it
// lacks appended, so the two copies are one session.
func applyImported(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.Imported) error {
	var data, held []*loom.SessionData
	for _, d := range p.Sessions {
		cur, err := tx.SessionForWrite(ctx, d.Session.ID)
		if err != nil {
			return err
		}
		gone, err := tx.Purged(ctx, d.Session.ID)
		if err != nil {
			return err
		}
		switch {
		case gone:
		case cur == nil:
			data = append(data, d)
		default:
			held = append(held, d)
		}
	}
	if len(data) > 0 {
		if err := importNew(ctx, tx, st, data); err != nil {
			return err
		}
	}
	for _, d := range held {
		if err := mergeImported(ctx, tx, st, d); err != nil {
			return err
		}
	}
	return nil
}

// importNew imports data, sessions not here, as their writer did.
func importNew(ctx context.Context, tx interface {
	ImportSteps
	StampSteps
	KeySteps
}, st synclog.Stamp, data []*loom.SessionData) error {
	if err := loom.ValidateImport(data); err != nil {
		return err
	}
	// Sessions whose key another session here has are stored without
	// it, and then the earlier claim keeps it (settleKey).
	rows := make([]*loom.SessionData, len(data))
	var clashes []KeyScope
	for i, d := range data {
		row, k, taken, err := keyless(ctx, tx, d.Session)
		if err != nil {
			return err
		}
		rows[i] = d
		if taken {
			c := *d
			c.Session = row
			rows[i] = &c
			clashes = append(clashes, k)
		}
	}
	if err := tx.ImportRows(ctx, rows); err != nil {
		return err
	}
	if err := stampImported(ctx, tx, st, data); err != nil {
		return err
	}
	for _, k := range clashes {
		if err := settleKey(ctx, tx, k); err != nil {
			return err
		}
	}
	return nil
}

// mergeImported merges imported session d, stamped st, into the session
// with its id here.
func mergeImported(ctx context.Context, tx Tx, st synclog.Stamp, d *loom.SessionData) error {
	if err := loom.ValidateImport([]*loom.SessionData{d}); err != nil {
		return err
	}
	if err := mergeChange(ctx, tx, d.Session.ID, st, rowChange(d.Session), 0); err != nil {
		return err
	}
	p := importAsAppend(d)
	if p == nil {
		return nil
	}
	cur, err := tx.SessionForWrite(ctx, d.Session.ID)
	if err != nil {
		return err
	}
	return appendTo(ctx, tx, st, p, cur, cur, 0)
}
