package sessionstore

import (
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/keptbytes"
)

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
	// RedactMessages replaces, in msgs, each message holding secrets by
	// a redacted copy, and texts by their redacted form, as one read (a
	// value found in one is replaced wherever it appears in all), and
	// returns how many it replaced.
	RedactMessages(msgs []*loom.Message, texts ...*string) int
}

// Option sets how a Store writes (New).
type Option func(*Store)

// Redacting has the store replace secrets by markers in every text it
// takes in with r: messages, parts, a session's title, description and
// last prompt, and the kept originals of imported files (with their
// sync records), whatever write brings them (TestEveryWriteIsRedacted
// holds each write of Store to it); nil redacts nothing. The redaction is the store's rule, so no edge can write past
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
		s.redactSession(c.Session)
		s.redactTexts(c.Title)
		s.redactMessages(c.Messages)
		if c.Part != nil {
			p := s.redactPart(*c.Part)
			c.Part = &p
		}
	}
}

// redactSession replaces the secrets of what x brings of a session
// itself: its title, description and last prompt, as one read.
func (s *Store) redactSession(x *loom.Session) {
	if s.redact == nil || x == nil {
		return
	}
	s.redact.RedactMessages(nil, &x.Title, &x.Description, &x.LastPrompt)
}

// redactTexts replaces the secrets of texts (those not nil), as one
// read.
func (s *Store) redactTexts(texts ...*string) {
	if s.redact == nil {
		return
	}
	var set []*string
	for _, t := range texts {
		if t != nil {
			set = append(set, t)
		}
	}
	if len(set) > 0 {
		s.redact.RedactMessages(nil, set...)
	}
}

// redactOriginals replaces, in chunks, the data of each chunk whose
// bytes hold secrets by the bytes redacted (each chunk one read), so
// that neither the store nor the sync record of the chunk
// (synclog.OriginalKept) ever holds them. The bytes are read as text,
// as `loom secrets redact` reads them: the JSONL of an agent's session
// reads back with the markers in place, so that `loom session reimport`
// gives the session as it was stored, redacted.
func (s *Store) redactOriginals(chunks []loom.OriginalChunk) error {
	if s.redact == nil {
		return nil
	}
	for i := range chunks {
		c := &chunks[i]
		b, err := keptbytes.Expand(c.Data)
		if err != nil {
			return fmt.Errorf("redact the original of %s: %w", c.Path, err)
		}
		text := string(b)
		if s.redact.RedactMessages(nil, &text) == 0 {
			continue
		}
		if c.Data, err = keptbytes.Compress([]byte(text)); err != nil {
			return fmt.Errorf("redact the original of %s: %w", c.Path, err)
		}
	}
	return nil
}
