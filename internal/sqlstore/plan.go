package sqlstore

import "github.com/loomhq/loom"

// ForkPlan is what Store.Fork writes: the new session's id, key, title,
// fork turn, last prompt and latest summary, and how many of the
// source's messages it holds (seq 1 to LastSeq). The new session copies
// none of them: it reads them from the source's rows (InheritSpans).
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

// ForkReads are what a fork plan asks of the store, inside the fork's
// transaction. Each reads the source's messages as the source holds
// them (through its spans) and costs one seek or a short walk, whatever
// the source's length.
type ForkReads struct {
	// TurnFrom returns the turn of the source's first message at or
	// after seq; ok is false when there is none.
	TurnFrom func(seq int64) (turn int, ok bool, err error)
	// LastUser returns the source's last user message at or before seq,
	// nil when there is none.
	LastUser func(seq int64) (*loom.Message, error)
	// LastSummary returns the seq of the source's latest summary message
	// at or before seq, 0 when there is none.
	LastSummary func(seq int64) (int64, error)
	// Usage sums the usage of the source's messages from to to.
	Usage func(from, to int64) (loom.Usage, error)
	// TitlesLike returns the titles of the source's user's live sessions
	// that start with base, compared case-insensitively.
	TitlesLike func(base string) ([]string, error)
}

// firstSeqAfter returns the seq of the first message of src after turn,
// or src.MessageCount+1 when there is none. Turns only grow with seq, so
// it is a binary search: about 17 reads for 100,000 messages, where
// walking the turns before would read them all.
func firstSeqAfter(src *loom.Session, turn int, r ForkReads) (int64, error) {
	lo, hi := int64(1), int64(src.MessageCount)+1
	if turn >= src.TurnCount {
		return hi, nil
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		t, ok, err := r.TurnFrom(mid)
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
func summaryAt(src *loom.Session, seq int64, r ForkReads) (int64, error) {
	if src.SummarySeq <= seq {
		return src.SummarySeq, nil
	}
	return r.LastSummary(seq)
}

// PlanFork decides how Store.Fork makes a fork of src, the session it
// forks, as opts asks: src must not be in the trash, opts.Turn must be
// one of its turns (0 for all of them), and a title given must be valid
// (ValidTitle); the new session's id is opts.ID or a new one, its title
// opts.Title or the next free default (ForkTitle).
func PlanFork(src *loom.Session, opts loom.ForkOptions, r ForkReads) (*ForkPlan, error) {
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
	next, err := firstSeqAfter(src, p.Turn, r)
	if err != nil {
		return nil, err
	}
	p.LastSeq = next - 1
	if p.LastSeq > 0 {
		u, err := r.LastUser(p.LastSeq)
		if err != nil {
			return nil, err
		}
		if u != nil {
			p.LastPrompt = loom.Truncate(u.Text(), loom.MaxPrompt)
		}
	}
	if p.SummarySeq, err = summaryAt(src, p.LastSeq, r); err != nil {
		return nil, err
	}
	if p.Title == "" {
		taken, err := r.TitlesLike(loom.ForkTitleBase(src.Title))
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
}

// PlanRewind decides how Store.Rewind takes src back to the end of turn
// opts.Turn: src must not be in the trash nor imported (the other tool's
// record, which later imports compare with), and must have turns after
// it.
// The fork's title is the next free "T (rewound)"; its last prompt is
// src's. The usage of the two sides comes from the shorter one, read,
// and src's totals: a rewind reads at most half the session's own
// messages, and rewinding a long session to an early turn reads a few.
func PlanRewind(src *loom.Session, opts loom.RewindOptions, r ForkReads) (*RewindPlan, error) {
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
	next, err := firstSeqAfter(src, opts.Turn, r)
	if err != nil {
		return nil, err
	}
	last := int64(src.MessageCount)
	if next > last {
		return nil, loom.Errorf(loom.EINVALID, "session %s has nothing after turn %d", src.ID, opts.Turn)
	}
	p := &RewindPlan{KeepSeq: next - 1, Store: loom.NewID()}
	p.Fork = ForkPlan{ID: opts.ID, Turn: opts.Turn, LastSeq: last, LastPrompt: src.LastPrompt, SummarySeq: src.SummarySeq}
	if p.Fork.ID == "" {
		p.Fork.ID = loom.NewID()
	}
	if u, err := r.LastUser(p.KeepSeq); err != nil {
		return nil, err
	} else if u != nil {
		p.KeepPrompt = loom.Truncate(u.Text(), loom.MaxPrompt)
	}
	if p.KeepSummarySeq, err = summaryAt(src, p.KeepSeq, r); err != nil {
		return nil, err
	}
	// src's usage is that of its own messages: a fork's start after its
	// fork turn, the ones it reads from its parent count in the parent's.
	own := int64(1)
	if src.Kind == loom.KindFork && src.ForkTurn > 0 {
		if own, err = firstSeqAfter(src, src.ForkTurn, r); err != nil {
			return nil, err
		}
	}
	switch {
	case p.KeepSeq < own:
		p.ForkUsage = src.Usage
	case p.KeepSeq-own < last-p.KeepSeq:
		p.KeepUsage, err = r.Usage(own, p.KeepSeq)
		p.ForkUsage = src.Usage
		p.ForkUsage.Sub(p.KeepUsage)
	default:
		p.ForkUsage, err = r.Usage(p.KeepSeq+1, last)
		p.KeepUsage = src.Usage
		p.KeepUsage.Sub(p.ForkUsage)
	}
	if err != nil {
		return nil, err
	}
	taken, err := r.TitlesLike(loom.ForkTitleBase(src.Title))
	if err != nil {
		return nil, err
	}
	p.Fork.Title = loom.RewoundTitle(src.Title, taken)
	return p, nil
}
