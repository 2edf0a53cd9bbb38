package sessionstore

import (
	"context"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// Conflict is a conflict fork as a store holds it (see PlanAppend): a
// chain of messages that another host's, appended at the same place in
// the same session at the same time, took the session from.
type Conflict struct {
	// ID and Title are the conflict fork's; Session and SessionTitle
	// the session it split from.
	ID           string `json:"id"`
	Title        string `json:"title"`
	Session      string `json:"session"`
	SessionTitle string `json:"session_title"`
	// Host wrote the fork's first own message.
	Host synclog.HostID `json:"-"`
}

// planConflictMove plans what a conflict does to src when the messages
// it holds from seq at on lose to another host's chain (MoveLocal):
// they move to the conflict fork id, which holds the whole conversation
// as src held it, as a rewind's fork does, and src keeps messages 1 to
// at-1, with the turn of message at-1, to take the other chain after.
func planConflictMove(ctx context.Context, src *loom.Session, at int64, id string, r ForkReads) (*RewindPlan, error) {
	turn, err := turnOf(ctx, src, at-1, r)
	if err != nil {
		return nil, err
	}
	p, err := planSplit(ctx, src, at-1, turn, id, r)
	if err != nil {
		return nil, err
	}
	p.Fork.Title = conflictTitle(src.Title)
	return p, nil
}

// planConflictFork plans the conflict fork id of src that holds src's
// messages 1 to at-1 and then another host's chain, which lost to src's
// (ForkIncoming).
func planConflictFork(ctx context.Context, src *loom.Session, at int64, id string, r ForkReads) (*ForkPlan, error) {
	p := &ForkPlan{ID: id, Title: conflictTitle(src.Title), LastSeq: at - 1}
	var err error
	if p.Turn, err = turnOf(ctx, src, p.LastSeq, r); err != nil {
		return nil, err
	}
	if err := p.ReadEnd(ctx, src, r); err != nil {
		return nil, err
	}
	return p, nil
}

// turnOf returns the turn of src's message seq, 0 for seq 0.
func turnOf(ctx context.Context, src *loom.Session, seq int64, r ForkReads) (int, error) {
	if seq < 1 {
		return 0, nil
	}
	t, ok, err := r.TurnFrom(ctx, src.ID, seq)
	if err != nil || ok {
		return t, err
	}
	return src.TurnCount, nil
}
