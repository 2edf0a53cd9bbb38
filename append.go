package loom

import (
	"strings"
	"time"
)

// ApplyAppend is what appending msgs does to session s, the one rule
// every engine's Append follows: it numbers msgs after s's last message
// (seq, and the turn each belongs to: user messages open turns), gives
// each the session's id, and an id and a creation time (now) when it
// lacks one; and it updates s: message and turn counters, the last
// prompt (the last user message's text, cut to MaxPrompt), the title
// when s has none (made from the first prompt of msgs), the seq of the
// latest summary, the usage totals, and UpdatedAt: now, or for a
// session imported from another tool (Source set) the time of its newest
// message, so that a grown import is as recent as its source, not as the
// import. Engines apply it to the session row they hold for writing,
// then store msgs and s.
func (s *Session) ApplyAppend(now time.Time, msgs ...*Message) {
	if len(msgs) == 0 {
		return
	}
	var add Usage
	titled := false
	for _, m := range msgs {
		prompt := s.count(m)
		m.SessionID, m.Seq, m.Turn = s.ID, int64(s.MessageCount), s.TurnCount
		if m.ID == "" {
			m.ID = NewID()
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		}
		// A title comes from the first prompt of an append, never a
		// later one of the same append.
		if prompt != "" && !titled {
			titled = true
			if s.Title == "" {
				s.Title = TitleFrom(prompt)
			}
		}
		add.Add(m.Usage)
	}
	s.Usage.Add(add)
	if s.Source == nil {
		s.UpdatedAt = now
		return
	}
	for _, m := range msgs {
		if m.CreatedAt.After(s.UpdatedAt) {
			s.UpdatedAt = m.CreatedAt
		}
	}
}

// Recount sets s's message counters (messages, turns, last prompt,
// latest summary) from msgs, all its messages in seq order, as appending
// them one by one would: what an import stores. Title, usage and times
// are left as they are.
func (s *Session) Recount(msgs []*Message) {
	s.MessageCount, s.TurnCount, s.SummarySeq, s.LastPrompt = 0, 0, 0, ""
	for _, m := range msgs {
		s.count(m)
	}
}

// count adds one message to s's counters and returns its prompt: the
// text of a user message, "" for any other.
func (s *Session) count(m *Message) string {
	s.MessageCount++
	switch m.Role {
	case RoleUser:
		s.TurnCount++
		if t := m.Text(); t != "" {
			s.LastPrompt = Truncate(t, MaxPrompt)
			return t
		}
	case RoleSummary:
		s.SummarySeq = max(s.SummarySeq, int64(s.MessageCount))
	}
	return ""
}

// Created returns the row of session s as its first message creates it
// at now: kind main unless set, the surface of its key unless set, its
// title trimmed, created now unless CreatedAt is set, updated now. It
// fails with EINVALID when s is not a valid new session. s itself is
// left alone.
func (s Session) Created(now time.Time) (*Session, error) {
	if s.Kind == "" {
		s.Kind = KindMain
	}
	if s.Surface == "" && s.Key != "" {
		s.Surface = SurfaceOf(s.Key)
	}
	s.Title = strings.TrimSpace(s.Title)
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	s.UpdatedAt = now
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}
