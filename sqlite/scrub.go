package sqlite

import (
	"context"
	"fmt"
)

// Scrub removes from the file what rewritten messages left behind: the
// search index's entries of their old text, which stay in its older
// segments until they are merged, and the free pages that still hold
// the old rows. `loom secrets redact` runs it after replacing secrets,
// so that the original text is gone from the store file too. It
// rewrites the whole file (VACUUM), in time proportional to its size.
func (s *Store) Scrub(ctx context.Context) error {
	for _, q := range []string{
		`INSERT INTO bodies_fts (bodies_fts) VALUES ('optimize')`,
		`VACUUM`,
		`PRAGMA wal_checkpoint(TRUNCATE)`,
	} {
		if _, err := s.writer.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("scrub %s: %w", s.path, err)
		}
	}
	return nil
}
