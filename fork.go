package loom

import "strconv"

// ForkPlan is what Store.Fork writes: the new session's id, key, title,
// fork turn and last prompt, and which messages it copies (seq 1 to
// LastSeq, sharing their bodies). Everything else of the new session is
// the source's, its usage starts at zero (the copied history's calls were
// paid for in the session they were made in), and its kind is fork.
type ForkPlan struct {
	ID    string
	Key   string
	Title string
	// Turn is the fork turn: the new session holds turns 1..Turn, so it
	// is also its turn count.
	Turn int
	// LastSeq is the seq of the last message copied, the one before
	// turn Turn+1 starts: the new session's message count.
	LastSeq int64
	// LastPrompt is the text of the last user message copied, cut to
	// MaxPrompt.
	LastPrompt string
}

// ForkReads are what a fork plan asks of the store, inside the fork's
// transaction.
type ForkReads struct {
	// FirstSeqAfter returns the seq of the first message of a turn after
	// turn in the source, 0 when there is none.
	FirstSeqAfter func(turn int) (int64, error)
	// LastUser returns the source's last user message at or before seq,
	// nil when there is none.
	LastUser func(seq int64) (*Message, error)
	// TitlesLike returns the titles of the source's user's live sessions
	// that start with base, compared case-insensitively.
	TitlesLike func(base string) ([]string, error)
}

// PlanFork decides how Store.Fork copies src, the session it forks, as
// opts asks: src must not be in the trash, opts.Turn must be one of its
// turns (0 for all of them), and a title given must be valid (ValidTitle);
// the new session's id is opts.ID or a new one, its title opts.Title or
// the next free default (ForkTitle).
func PlanFork(src *Session, opts ForkOptions, r ForkReads) (*ForkPlan, error) {
	if src.DeletedAt != nil {
		return nil, Errorf(ENOTFOUND, "session %s is in the trash", src.ID)
	}
	if err := src.CheckForkTurn(opts.Turn); err != nil {
		return nil, err
	}
	if opts.Title != "" {
		if err := ValidTitle(opts.Title); err != nil {
			return nil, err
		}
	}
	p := &ForkPlan{ID: opts.ID, Key: opts.Key, Title: opts.Title, Turn: opts.Turn, LastSeq: int64(src.MessageCount)}
	if p.ID == "" {
		p.ID = NewID()
	}
	if p.Turn == 0 {
		p.Turn = src.TurnCount
	}
	next, err := r.FirstSeqAfter(p.Turn)
	if err != nil {
		return nil, err
	}
	if next > 0 {
		p.LastSeq = next - 1
	}
	if p.LastSeq > 0 {
		u, err := r.LastUser(p.LastSeq)
		if err != nil {
			return nil, err
		}
		if u != nil {
			p.LastPrompt = Truncate(u.Text(), MaxPrompt)
		}
	}
	if p.Title == "" {
		taken, err := r.TitlesLike(ForkTitleBase(src.Title))
		if err != nil {
			return nil, err
		}
		p.Title = ForkTitle(src.Title, taken)
	}
	return p, nil
}

// CheckForkTurn checks that s can be forked at turn: one of its turns, or
// 0 for all of them.
func (s *Session) CheckForkTurn(turn int) error {
	if turn < 0 || turn > s.TurnCount {
		turns := strconv.Itoa(s.TurnCount) + " turns"
		if s.TurnCount == 1 {
			turns = "1 turn"
		}
		return Errorf(EINVALID, "session %s has %s; cannot fork at turn %d", s.ID, turns, turn)
	}
	return nil
}

// RewindPlan is what Store.Rewind writes. The session keeps its id, its
// key and messages 1 to KeepSeq; Fork is the new session, kind fork at
// turn Fork.Turn, that holds the whole conversation as it was: copies of
// messages 1 to KeepSeq (sharing their bodies) and the session's later
// messages themselves, moved with their ids. Fork.LastSeq is the
// message count the fork has (the session's before the rewind).
type RewindPlan struct {
	Fork       ForkPlan
	KeepSeq    int64
	KeepPrompt string
}

// PlanRewind decides how Store.Rewind takes src back to the end of turn
// opts.Turn: src must not be in the trash nor imported (the other tool's
// record, which later imports compare with), and must have turns after
// it.
// The fork's title is the next free "T (rewound)"; its last prompt is
// src's.
func PlanRewind(src *Session, opts RewindOptions, r ForkReads) (*RewindPlan, error) {
	if src.DeletedAt != nil {
		return nil, Errorf(ENOTFOUND, "session %s is in the trash", src.ID)
	}
	// An imported session is the other tool's record, which the next
	// import compares with: it goes back by a fork of it instead.
	if src.Source != nil {
		return nil, Errorf(EINVALID, "session %s is %s's, imported; fork it at the turn instead (loom session fork %s --turn %d)", src.ID, src.Source.Tool, src.ID, opts.Turn)
	}
	if opts.Turn < 1 || opts.Turn >= src.TurnCount {
		if src.TurnCount < 2 {
			return nil, Errorf(EINVALID, "session %s has %d turn%s; there is nothing to rewind", src.ID, src.TurnCount, plural(src.TurnCount))
		}
		return nil, Errorf(EINVALID, "session %s has %d turns; rewind to a turn from 1 to %d", src.ID, src.TurnCount, src.TurnCount-1)
	}
	next, err := r.FirstSeqAfter(opts.Turn)
	if err != nil {
		return nil, err
	}
	if next == 0 {
		return nil, Errorf(EINVALID, "session %s has nothing after turn %d", src.ID, opts.Turn)
	}
	p := &RewindPlan{KeepSeq: next - 1}
	p.Fork = ForkPlan{ID: opts.ID, Turn: opts.Turn, LastSeq: int64(src.MessageCount), LastPrompt: src.LastPrompt}
	if p.Fork.ID == "" {
		p.Fork.ID = NewID()
	}
	if u, err := r.LastUser(p.KeepSeq); err != nil {
		return nil, err
	} else if u != nil {
		p.KeepPrompt = Truncate(u.Text(), MaxPrompt)
	}
	taken, err := r.TitlesLike(ForkTitleBase(src.Title))
	if err != nil {
		return nil, err
	}
	p.Fork.Title = RewoundTitle(src.Title, taken)
	return p, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
