package secrets

import (
	"context"

	"github.com/loomhq/loom"
)

// Store is a store that redacts what is written to it: messages
// appended, parts updated and sessions imported have their secrets
// replaced by markers before they reach the store below (config.toml's
// [secrets] redact_on_write). Messages given to Append are redacted in
// place, so the writer goes on with what was stored. Everything else is
// the store below's.
type Store struct {
	loom.Store
	Detector *Detector
}

// Unwrap returns the store below, for what only it provides (tokens,
// sync).
func (s *Store) Unwrap() loom.Store { return s.Store }

// Append implements loom.Store.
func (s *Store) Append(ctx context.Context, sess *loom.Session, msgs ...*loom.Message) error {
	for _, m := range msgs {
		if r, n := s.Detector.RedactMessage(m); n > 0 {
			*m = *r
		}
	}
	return s.Store.Append(ctx, sess, msgs...)
}

// UpdatePart implements loom.Store.
func (s *Store) UpdatePart(ctx context.Context, sessionID string, seq int64, part loom.Part) error {
	part, _ = s.Detector.RedactPart(part)
	return s.Store.UpdatePart(ctx, sessionID, seq, part)
}

// Import implements loom.Store.
func (s *Store) Import(ctx context.Context, sessions []*loom.SessionData) error {
	s.Detector.RedactSessions(sessions)
	return s.Store.Import(ctx, sessions)
}
