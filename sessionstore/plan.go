package sessionstore

import (
	"context"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/synclog"
)

// ForkSteps are what a fork or a rewind reads of the session it forks,
// and writes.
type ForkSteps interface {
	ForkReads
	// ForkSource returns session id as a fork reads it, keeping its
	// messages from changing until the transaction ends where the engine
	// locks rows; ENOTFOUND when there is none.
	ForkSource(ctx context.Context, id string) (*loom.Session, error)
	// CreateFork writes the session plan describes, forked from src,
	// with spans, and returns it as stored.
	CreateFork(ctx context.Context, src *loom.Session, plan *ForkPlan, spans []span.Span) (*loom.Session, error)
	// StoreRewind writes a rewind of src as plan describes: the fork
	// that takes the later turns reads them through forkSpans, and src
	// keeps its turns with keepSpans. It returns the fork as stored.
	StoreRewind(ctx context.Context, src *loom.Session, plan *RewindPlan, forkSpans, keepSpans []span.Span) (*loom.Session, error)
}

// ForkReads are what a fork or rewind plan asks of the store about the
// session it forks (src), inside the transaction. Each reads src's
// messages as src holds them (through its spans) and costs one seek or a
// short walk, whatever src's length.
type ForkReads interface {
	// TurnFrom returns the turn of src's first message at or after seq;
	// ok is false when there is none.
	TurnFrom(ctx context.Context, src string, seq int64) (turn int, ok bool, err error)
	// LastUser returns src's last user message at or before seq, nil
	// when there is none.
	LastUser(ctx context.Context, src string, seq int64) (*loom.Message, error)
	// LastSummary returns the seq of src's latest summary message at or
	// before seq, 0 when there is none.
	LastSummary(ctx context.Context, src string, seq int64) (int64, error)
	// UsageOf sums the usage of src's messages from to to.
	UsageOf(ctx context.Context, src string, from, to int64) (loom.Usage, error)
	// TitlesLike returns the titles of user's live sessions that start
	// with base, compared case-insensitively.
	TitlesLike(ctx context.Context, user, base string) ([]string, error)
}

// ForkPlan is what Store.Fork writes: the new session's id, key, title,
// fork turn, last prompt and latest summary, and how many of the
// source's messages it holds (seq 1 to LastSeq). The new session copies
// none of them: it reads them from the source's rows (span.Inherit).
// Everything else of the new session is the source's, its usage starts
// at zero (the inherited history's calls were paid for in the session
// they were made in), and its kind is fork.
type ForkPlan struct {
	ID    string
	Key   string
	Title string
	// Turn is the fork turn: the new session holds turns 1..Turn, so it
	// is also its turn count.
	Turn int
	// LastSeq is the seq of the last message inherited, the one before
	// turn Turn+1 starts: the new session's message count.
	LastSeq int64
	// LastPrompt is the text of the last user message inherited, cut to
	// MaxPrompt.
	LastPrompt string
	// SummarySeq is the seq of the latest summary inherited, 0 for none.
	SummarySeq int64
}

// firstSeqAfter returns the seq of the first message of src after turn,
// or src.MessageCount+1 when there is none. Turns only grow with seq, so
// it is a binary search: about 17 reads for 100,000 messages, where
// walking the turns before would read them all.
func firstSeqAfter(ctx context.Context, src *loom.Session, turn int, r ForkReads) (int64, error) {
	lo, hi := int64(1), int64(src.MessageCount)+1
	if turn >= src.TurnCount {
		return hi, nil
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		t, ok, err := r.TurnFrom(ctx, src.ID, mid)
		if err != nil {
			return 0, err
		}
		if !ok || t > turn {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}

// summaryAt returns the seq of src's latest summary at or before seq.
func summaryAt(ctx context.Context, src *loom.Session, seq int64, r ForkReads) (int64, error) {
	if src.SummarySeq <= seq {
		return src.SummarySeq, nil
	}
	return r.LastSummary(ctx, src.ID, seq)
}

// ReadEnd sets p's last prompt and latest summary to src's at p.LastSeq.
func (p *ForkPlan) ReadEnd(ctx context.Context, src *loom.Session, r ForkReads) error {
	if p.LastSeq > 0 {
		u, err := r.LastUser(ctx, src.ID, p.LastSeq)
		if err != nil {
			return err
		}
		if u != nil {
			p.LastPrompt = loom.Truncate(u.Text(), loom.MaxPrompt)
		}
	}
	var err error
	p.SummarySeq, err = summaryAt(ctx, src, p.LastSeq, r)
	return err
}

// planFork decides how Store.Fork makes a fork of src, the session it
// forks, as opts asks: src must not be in the trash, opts.Turn must be
// one of its turns (0 for all of them), and a title given must be valid
// (ValidTitle); the new session's id is opts.ID or a new one, its title
// opts.Title or the next free default (ForkTitle).
func planFork(ctx context.Context, src *loom.Session, opts loom.ForkOptions, r ForkReads) (*ForkPlan, error) {
	if src.DeletedAt != nil {
		return nil, loom.Errorf(loom.ENOTFOUND, "session %s is in the trash; restore it before forking", src.ID)
	}
	if err := src.CheckForkTurn(opts.Turn); err != nil {
		return nil, err
	}
	if opts.Title != "" {
		if err := loom.ValidTitle(opts.Title); err != nil {
			return nil, err
		}
	}
	p := &ForkPlan{ID: opts.ID, Key: opts.Key, Title: opts.Title, Turn: opts.Turn}
	if p.ID == "" {
		p.ID = loom.NewID()
	}
	if p.Turn == 0 {
		p.Turn = src.TurnCount
	}
	next, err := firstSeqAfter(ctx, src, p.Turn, r)
	if err != nil {
		return nil, err
	}
	p.LastSeq = next - 1
	if err := p.ReadEnd(ctx, src, r); err != nil {
		return nil, err
	}
	if p.Title == "" {
		taken, err := r.TitlesLike(ctx, src.UserID, loom.ForkTitleBase(src.Title))
		if err != nil {
			return nil, err
		}
		p.Title = loom.ForkTitle(src.Title, taken)
	}
	return p, nil
}

// RewindPlan is what Store.Rewind writes. The session keeps its id, its
// key and messages 1 to KeepSeq; Fork is the new session, kind fork at
// turn Fork.Turn, that holds the whole conversation as it was
// (Fork.LastSeq is the session's message count before the rewind).
// Nothing is copied or moved: the fork reads every message from the rows
// where they are, and the session reads the messages it keeps from the
// same rows and stores its next ones under Store, a new id, since the
// rows after KeepSeq are the fork's now.
type RewindPlan struct {
	Fork ForkPlan
	// ForkUsage is the usage of the turns the fork takes (those after
	// KeepSeq), KeepUsage that of the turns the session keeps.
	ForkUsage, KeepUsage loom.Usage
	KeepSeq              int64
	KeepPrompt           string
	// KeepSummarySeq is the seq of the latest summary the session keeps.
	KeepSummarySeq int64
	// Store is where the session stores its messages from KeepSeq+1 on.
	Store string
	// At is the time of the rewind: the session's updated time after it.
	At time.Time
}

// planRewind decides how Store.Rewind takes src back to the end of turn
// opts.Turn: src must not be in the trash nor imported (the other tool's
// record, which later imports compare with), and must have turns after
// it.
// The fork's title is the next free "T (rewound)"; its last prompt is
// src's. The usage of the two sides comes from the shorter one, read,
// and src's totals: a rewind reads at most half the session's own
// messages, and rewinding a long session to an early turn reads a few.
func planRewind(ctx context.Context, src *loom.Session, opts loom.RewindOptions, r ForkReads) (*RewindPlan, error) {
	if src.DeletedAt != nil {
		return nil, loom.Errorf(loom.ENOTFOUND, "session %s is in the trash", src.ID)
	}
	// An imported session is the other tool's record, which the next
	// import compares with: it goes back by a fork of it instead.
	if src.Source != nil {
		return nil, loom.Errorf(loom.EINVALID, "session %s is %s's, imported; fork it at the turn instead (loom session fork %s --turn %d)", src.ID, src.Source.Tool, src.ID, opts.Turn)
	}
	if err := src.CheckRewindTurn(opts.Turn); err != nil {
		return nil, err
	}
	next, err := firstSeqAfter(ctx, src, opts.Turn, r)
	if err != nil {
		return nil, err
	}
	if next > int64(src.MessageCount) {
		return nil, loom.Errorf(loom.EINVALID, "session %s has nothing after turn %d", src.ID, opts.Turn)
	}
	id := opts.ID
	if id == "" {
		id = loom.NewID()
	}
	p, err := planSplit(ctx, src, next-1, opts.Turn, id, r)
	if err != nil {
		return nil, err
	}
	taken, err := r.TitlesLike(ctx, src.UserID, loom.ForkTitleBase(src.Title))
	if err != nil {
		return nil, err
	}
	p.Fork.Title = loom.RewoundTitle(src.Title, taken)
	return p, nil
}

// planSplit plans the split of src after message keep, which ends turn
// turn or is in it: the fork id takes the whole conversation, and src
// keeps messages 1 to keep (a rewind, or a conflict that moves src's
// messages from keep+1 on). The fork's title is left to the caller.
func planSplit(ctx context.Context, src *loom.Session, keep int64, turn int, id string, r ForkReads) (*RewindPlan, error) {
	last := int64(src.MessageCount)
	p := &RewindPlan{KeepSeq: keep, Store: loom.NewID()}
	p.Fork = ForkPlan{ID: id, Turn: turn, LastSeq: last, LastPrompt: src.LastPrompt, SummarySeq: src.SummarySeq}
	var err error
	if u, err := r.LastUser(ctx, src.ID, p.KeepSeq); err != nil {
		return nil, err
	} else if u != nil {
		p.KeepPrompt = loom.Truncate(u.Text(), loom.MaxPrompt)
	}
	if p.KeepSummarySeq, err = summaryAt(ctx, src, p.KeepSeq, r); err != nil {
		return nil, err
	}
	// src's usage is that of its own messages: a fork's start after its
	// fork turn, the ones it reads from its parent count in the parent's.
	own := int64(1)
	if src.Kind == loom.KindFork && src.ForkTurn > 0 {
		if own, err = firstSeqAfter(ctx, src, src.ForkTurn, r); err != nil {
			return nil, err
		}
	}
	switch {
	case p.KeepSeq < own:
		p.ForkUsage = src.Usage
	case p.KeepSeq-own < last-p.KeepSeq:
		p.KeepUsage, err = r.UsageOf(ctx, src.ID, own, p.KeepSeq)
		p.ForkUsage = src.Usage
		p.ForkUsage.Sub(p.KeepUsage)
	default:
		p.ForkUsage, err = r.UsageOf(ctx, src.ID, p.KeepSeq+1, last)
		p.KeepUsage = src.Usage
		p.KeepUsage.Sub(p.ForkUsage)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// forkIn is Store.Fork of src, read inside tx, as opts asks: the new
// session copies none of src's messages, it reads them from src's rows
// through spans (span.Inherit), so a fork writes one session row and a
// span for each store the history lies in, whatever its length.
func forkIn(ctx context.Context, tx Tx, log *SyncLog, src *loom.Session, opts loom.ForkOptions) (*loom.Session, error) {
	plan, err := planFork(ctx, src, opts, tx)
	if err != nil {
		return nil, err
	}
	out, err := createFork(ctx, tx, src, plan)
	if err != nil {
		return nil, err
	}
	err = recordIn(ctx, log, func(log *SyncLog) (synclog.Payload, error) {
		last, err := log.MessageID(ctx, src.ID, plan.LastSeq)
		return &synclog.Forked{Session: out, LastSeq: plan.LastSeq, LastID: last}, err
	})
	return out, err
}

// rewindIn is Store.Rewind of session id by the store handle owner, inside
// tx. Nothing is copied or moved: the fork reads the whole conversation
// from the rows where it is, the session reads the messages it keeps
// from the same rows and stores its next ones under a new id
// (RewindPlan), so a rewind writes a session row and a few spans,
// whatever the session's length.
func rewindIn(ctx context.Context, tx Tx, log *SyncLog, id string, opts loom.RewindOptions, owner string, now time.Time) (*loom.Session, error) {
	src, err := tx.SessionForWrite(ctx, id)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, loom.NotFound(id)
	}
	if err := loom.CheckNotHeld([]*loom.Session{src}, owner); err != nil {
		return nil, err
	}
	plan, err := planRewind(ctx, src, opts, tx)
	if err != nil {
		return nil, err
	}
	plan.At = now
	keep, err := messageIDIfSyncing(ctx, log, src.ID, plan.KeepSeq)
	if err != nil {
		return nil, err
	}
	fork, err := storeSplit(ctx, tx, src, plan)
	if err != nil {
		return nil, err
	}
	err = recordIn(ctx, log, func(log *SyncLog) (synclog.Payload, error) {
		return &synclog.Rewound{SessionID: src.ID, Turn: opts.Turn, KeepSeq: plan.KeepSeq, KeepID: keep,
			Fork: fork, Store: plan.Store, At: now}, nil
	})
	return fork, err
}

// createFork writes the fork plan describes of src: a session row that
// reads src's messages 1 to plan.LastSeq through src's spans.
func createFork(ctx context.Context, tx interface {
	BodySteps
	ForkSteps
}, src *loom.Session, plan *ForkPlan) (*loom.Session, error) {
	spans, err := tx.Spans(ctx, src.ID)
	if err != nil {
		return nil, err
	}
	return tx.CreateFork(ctx, src, plan, span.Inherit(spans, plan.LastSeq, plan.ID))
}

// storeSplit writes plan, a split of src after message plan.KeepSeq (a
// rewind's, a conflict's): the fork reads the whole conversation through
// src's spans, and src keeps its first messages and stores its next ones
// under plan.Store.
func storeSplit(ctx context.Context, tx interface {
	BodySteps
	ForkSteps
}, src *loom.Session, plan *RewindPlan) (*loom.Session, error) {
	spans, err := tx.Spans(ctx, src.ID)
	if err != nil {
		return nil, err
	}
	return tx.StoreRewind(ctx, src, plan,
		span.Inherit(spans, plan.Fork.LastSeq, plan.Fork.ID), span.Inherit(spans, plan.KeepSeq, plan.Store))
}

// messageIDIfSyncing is the log's MessageID when the store keeps a sync log,
// "" otherwise: for a record that names a message as it was before the
// change.
func messageIDIfSyncing(ctx context.Context, log *SyncLog, id string, seq int64) (string, error) {
	if log == nil {
		return "", nil
	}
	return log.MessageID(ctx, id, seq)
}
