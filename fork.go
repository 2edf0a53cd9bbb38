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
