package postgres

import (
	"context"
	"fmt"
)

// Scrub removes the dead row versions that rewritten messages left
// behind in the tables of bodies and messages (with their search
// vectors), as `loom secrets redact` needs after replacing secrets, so
// that the original text is gone from the tables too; what PostgreSQL
// keeps outside them (its write-ahead log and backups) is the server's.
func (s *Store) Scrub(ctx context.Context) error {
	for _, q := range []string{`VACUUM bodies`, `VACUUM messages`} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			return fmt.Errorf("scrub: %s: %w", q, err)
		}
	}
	return nil
}
