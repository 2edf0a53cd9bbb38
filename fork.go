package loom

import "strconv"

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

// CanRewind reports whether s has a turn to go back to: it needs two.
func (s *Session) CanRewind() error {
	if s.TurnCount < 2 {
		return Errorf(EINVALID, "session %s has %d turn%s; there is nothing to rewind", s.ID, s.TurnCount, plural(s.TurnCount))
	}
	return nil
}

// CheckRewindTurn checks that s can go back to the end of turn: one of
// its turns but the last. Every edge that rewinds asks it, so that each
// says the same of a turn out of range; a session of two turns names
// the one turn it has, never "1 to 1".
func (s *Session) CheckRewindTurn(turn int) error {
	if err := s.CanRewind(); err != nil {
		return err
	}
	switch {
	case turn >= 1 && turn < s.TurnCount:
		return nil
	case s.TurnCount == 2:
		return Errorf(EINVALID, "session %s has 2 turns; the only turn it can go back to is 1", s.ID)
	}
	return Errorf(EINVALID, "session %s has %d turns; rewind to a turn from 1 to %d", s.ID, s.TurnCount, s.TurnCount-1)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
