package sessionstore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/synclog"
)

// applyPurged removes p's sessions for good and keeps that they are
// purged, once this store holds every record p's writer had seen (so
// that every host purges the same sessions as they were then). The forks
// made of them that p had not seen go with them (Life.Unseen),
// as they go on the hosts that get them after the purge. A session
// holding work or changes of this host's that p's writer had not seen,
// or a fork it made, is first saved under a new id (Rescue),
// recorded in this host's log as an import, so the work survives on
// every machine.
func applyPurged(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.Purged) error {
	self, err := tx.Host(ctx)
	if err != nil {
		return err
	}
	for _, h := range slices.Sorted(maps.Keys(p.Seen)) {
		if h == self {
			continue
		}
		got, err := tx.Applied(ctx, h)
		if err != nil {
			return err
		}
		if got < p.Seen[h] {
			return fmt.Errorf("%w: a purge whose writer had seen record %d of host %s, which this store has not applied yet", ErrWaits, p.Seen[h], h)
		}
	}
	// The purged sessions here, then the unseen forks found under them,
	// in turn.
	var gone []string
	for _, x := range p.SessionIDs {
		cur, err := tx.SessionForWrite(ctx, x)
		if err != nil {
			return err
		}
		if cur != nil {
			gone = append(gone, x)
		}
	}
	var copies []*loom.SessionData
	for i := 0; i < len(gone); i++ {
		id := gone[i]
		cur, err := tx.SessionForWrite(ctx, id)
		if err != nil {
			return err
		}
		l, err := loadLife(ctx, tx, id)
		if err != nil {
			return err
		}
		if Rescue(p, self, l) {
			d, err := rescueCopy(ctx, tx, st, cur, self)
			if err != nil {
				return err
			}
			if d != nil {
				copies = append(copies, d)
			}
		}
		forks, err := tx.ForksOf(ctx, id, plainFork, rewindFork)
		if err != nil {
			return err
		}
		for _, f := range forks {
			lf, err := loadLife(ctx, tx, f)
			if err != nil {
				return err
			}
			if lf.Unseen(p) && !slices.Contains(gone, f) {
				gone = append(gone, f)
			}
		}
	}
	// The forks before what they were made of, so that no message a
	// fork reads is left without its session.
	for i := len(gone) - 1; i >= 0; i-- {
		if err := tx.DeleteRow(ctx, gone[i]); err != nil {
			return fmt.Errorf("purge %s: %w", gone[i], err)
		}
	}
	forks := slices.DeleteFunc(slices.Clone(gone), func(id string) bool { return slices.Contains(p.SessionIDs, id) })
	if err := markPurged(ctx, tx, append(slices.Clone(p.SessionIDs), forks...)); err != nil {
		return err
	}
	// The purge, for the work it had not seen that arrives later: it
	// goes to the copy its host saved, once that copy is here
	// (rescueUnseen).
	for _, id := range gone {
		if err := saveState(ctx, tx, PurgeKeptState, id, PurgeKept{Stamp: st, Seen: p.Seen}); err != nil {
			return err
		}
	}
	if len(copies) == 0 {
		return nil
	}
	if err := loom.ValidateImport(copies); err != nil {
		return fmt.Errorf("save a copy of purged work: %w", err)
	}
	return importIn(ctx, tx, &SyncLog{tx: tx}, copies) // recorded in the store's own log
}

// rescueCopy returns the copy host self saves of session x before
// purge st takes it (rescued), nil when it is here already (the purge's
// writer made it first: rescueUnseen).
func rescueCopy(ctx context.Context, tx Tx, st synclog.Stamp, x *loom.Session, self synclog.HostID) (*loom.SessionData, error) {
	id := rescueID(st, x.ID, self)
	if cur, err := tx.SessionForWrite(ctx, id); err != nil || cur != nil {
		return nil, err
	}
	msgs, err := tx.Messages(ctx, x.ID, 1, span.OpenSeq)
	if err != nil {
		return nil, err
	}
	return rescued(st, id, &loom.SessionData{Session: x, Messages: msgs}), nil
}

// rescued returns session d.Session with its messages under the ids
// of copy id of purge st (rescuedMessageID), titled as recoveredTitle
// says: a session of its own, out of the trash, whatever it was a fork
// or a sub-agent of, and without its key (a host that applies the copy
// before the purge would find the key taken, and a key a purge lets go
// goes to no session: see settleKey).
func rescued(st synclog.Stamp, id string, d *loom.SessionData) *loom.SessionData {
	row := *d.Session
	row.ID, row.Title, row.Kind, row.ParentID, row.ForkTurn = id, recoveredTitle(d.Session.Title), loom.KindMain, "", 0
	row.Lock, row.DeletedAt, row.Key = nil, nil, ""
	msgs := make([]*loom.Message, len(d.Messages))
	for i, m := range d.Messages {
		c := *m
		c.ID, c.SessionID = rescuedMessageID(st, id, m.ID), id
		msgs[i] = &c
	}
	return &loom.SessionData{Session: &row, Messages: msgs}
}

// rescueUnseen applies record p, headed h, of work in a purged session
// that the purge had not seen (PurgeKept) to the copy h's host saves of
// the session when it applies the purge (rescueID), when that copy is
// here: so a part or usage update that its host made before it applied
// the purge reaches the copy on every host, whichever copy came first.
// A store that keeps what its own purge took (PurgeKept.Data) makes the
// copy from that first, recorded as an import, and records the work it
// applies to the copy in its own log too, as work in the copy: so it
// reaches every host at once, with the copy, whichever of the two hosts
// syncs first, also a host that applied it to the session before the
// purge. It reports whether it applied p; records it cannot place in a
// copy (work following messages a third host added) are dropped, as for
// any purged session, and come with the copy their host saves.
func rescueUnseen(ctx context.Context, tx Tx, h synclog.Header, p synclog.Payload) (bool, error) {
	var id, mid string
	var seq int64
	switch p := p.(type) {
	case *synclog.MessagesAppended:
		id, seq, mid = p.SessionID, p.FirstSeq-1, p.PrevID
	case *synclog.PartUpdated:
		id, seq, mid = p.SessionID, p.Seq, p.MessageID
	case *synclog.UsageUpdated:
		id, seq, mid = p.SessionID, p.Seq, p.MessageID
	case *synclog.TimesSettled:
		id, seq, mid = p.SessionID, p.Seq, p.MessageID
	default:
		return false, nil
	}
	k, err := loadState[PurgeKept](ctx, tx, PurgeKeptState, id)
	if err != nil || k.Stamp.IsZero() || k.Seen.Saw(h.Host, h.Index) {
		return false, err
	}
	copyID := rescueID(k.Stamp, id, h.Host)
	if gone, err := tx.Purged(ctx, copyID); err != nil || gone {
		return gone, err
	}
	cur, err := tx.SessionForWrite(ctx, copyID)
	if err != nil {
		return false, err
	}
	at := rescuedMessageID(k.Stamp, copyID, mid)
	switch {
	case cur == nil && k.Data == nil:
		return false, nil
	case cur == nil:
		base := rescued(k.Stamp, copyID, k.Data)
		if seq > int64(len(base.Messages)) || (seq > 0 && base.Messages[seq-1].ID != at) {
			return false, nil
		}
		if err := loom.ValidateImport([]*loom.SessionData{base}); err != nil {
			return false, fmt.Errorf("save a copy of purged work: %w", err)
		}
		if err := importIn(ctx, tx, &SyncLog{tx: tx}, []*loom.SessionData{base}); err != nil {
			return false, fmt.Errorf("save a copy of purged work: %w", err)
		}
	case seq > 0:
		if got, err := tx.MessageID(ctx, copyID, seq); err != nil || got != at {
			return false, err
		}
	}
	work := onCopy(p, k.Stamp, copyID)
	if k.Data == nil {
		return true, applyChange(ctx, tx, h.Stamp(), work)
	}
	// Recorded here, and applied as every host applies it.
	st, idx, err := (&SyncLog{tx: tx}).Append(ctx, work)
	if err != nil {
		return false, fmt.Errorf("save purged work in its copy: %w", err)
	}
	if err := applyChange(ctx, tx, st, work); err != nil {
		return false, err
	}
	return true, lived(ctx, tx, st.Host, idx, work)
}

// onCopy returns work record p, of a session purge st took, as the same
// work in copy id of it (rescued).
func onCopy(p synclog.Payload, st synclog.Stamp, id string) synclog.Payload {
	switch p := p.(type) {
	case *synclog.MessagesAppended:
		c := *p
		c.SessionID = id
		if c.PrevID != "" {
			c.PrevID = rescuedMessageID(st, id, p.PrevID)
		}
		c.Messages = make([]*loom.Message, len(p.Messages))
		for i, m := range p.Messages {
			x := *m
			x.ID, x.SessionID = rescuedMessageID(st, id, m.ID), id
			c.Messages[i] = &x
		}
		return &c
	case *synclog.PartUpdated:
		c := *p
		c.SessionID, c.MessageID = id, rescuedMessageID(st, id, p.MessageID)
		return &c
	case *synclog.UsageUpdated:
		c := *p
		c.SessionID, c.MessageID = id, rescuedMessageID(st, id, p.MessageID)
		return &c
	case *synclog.TimesSettled:
		c := *p
		c.SessionID = id
		if c.MessageID != "" {
			c.MessageID = rescuedMessageID(st, id, p.MessageID)
		}
		return &c
	}
	return p
}

// forgetPurged lets go what tx's store keeps of the sessions its purges
// at index upTo of its log and before took (PurgeKept.Data); the purges
// themselves stay.
func forgetPurged(ctx context.Context, tx StampSteps, upTo int64) (int, error) {
	all, err := tx.States(ctx, PurgeKeptState)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", PurgeKeptState.what(), err)
	}
	n := 0
	for _, e := range all {
		var k PurgeKept
		if err := json.Unmarshal([]byte(e.Value), &k); err != nil {
			return 0, fmt.Errorf("read %s of %s: %w", PurgeKeptState.what(), e.ID, err)
		}
		if k.Data == nil || k.Index > upTo {
			continue
		}
		k.Data = nil
		if err := saveState(ctx, tx, PurgeKeptState, e.ID, k); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}
