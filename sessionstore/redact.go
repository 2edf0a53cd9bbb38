package sessionstore

import "github.com/loomhq/loom"

// Redactor replaces the secrets of text about to be written by markers
// (a *secrets.Detector is one): config.toml's [secrets] redact_on_write
// gives it to the store, which then applies it to every text a write
// brings in, whatever edge the write comes from.
type Redactor interface {
	// RedactMessage returns m with the secrets of its parts replaced (a
	// copy when there were any; m itself otherwise), and how many.
	RedactMessage(m *loom.Message) (*loom.Message, int)
	// RedactPart returns p with its secrets replaced, and how many; p
	// itself is not changed.
	RedactPart(p loom.Part) (loom.Part, int)
	// RedactSessions replaces, in data, each session and message holding
	// secrets by a redacted copy, and returns how many it replaced.
	RedactSessions(data []*loom.SessionData) int
}

// Option sets how a Store writes (New).
type Option func(*Store)

// Redacting has the store replace secrets by markers in every text it
// writes (Append, UpdatePart, Import, ApplyImport) with r; nil redacts
// nothing. The redaction is the store's rule, so no edge can write past
// it, and the store stays the engine's, with all it provides.
func Redacting(r Redactor) Option {
	return func(s *Store) { s.redact = r }
}

// redactMessages replaces, in msgs, each message holding secrets by its
// redacted copy, in place, so that the writer goes on with what was
// stored.
func (s *Store) redactMessages(msgs []*loom.Message) {
	if s.redact == nil {
		return
	}
	for _, m := range msgs {
		if m == nil {
			continue
		}
		if r, n := s.redact.RedactMessage(m); n > 0 {
			*m = *r
		}
	}
}

// redactPart returns p with its secrets replaced.
func (s *Store) redactPart(p loom.Part) loom.Part {
	if s.redact == nil {
		return p
	}
	p, _ = s.redact.RedactPart(p)
	return p
}

// redactImport replaces the secrets of what an import writes: its
// sessions' metadata and messages, and its changes' messages and parts.
func (s *Store) redactImport(sessions []*loom.SessionData, changes []loom.ImportChange) {
	if s.redact == nil {
		return
	}
	s.redact.RedactSessions(sessions)
	for i := range changes {
		c := &changes[i]
		s.redactMessages(c.Messages)
		if c.Part != nil {
			p := s.redactPart(*c.Part)
			c.Part = &p
		}
	}
}
