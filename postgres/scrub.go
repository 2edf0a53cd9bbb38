package postgres

import (
	"context"
	"fmt"
)

// scrubbed are the tables whose rows a redaction rewrites: the bodies
// of messages (their parts, with the search vector and its GIN index,
// and their TOAST table), the messages that point at them, and the
// sessions (titles, descriptions, last prompts).
var scrubbed = []string{"bodies", "messages", "sessions"}

// Scrub removes what rewritten messages and sessions left behind in the
// tables' files, as `loom secrets redact` needs after replacing
// secrets: an update leaves the old row version in the table's file
// (and its TOAST table's, and the index entries pointing at it), and a
// plain VACUUM only marks that space free for reuse, leaving its bytes.
// VACUUM FULL writes each table anew, with its TOAST table and indexes,
// into new files and deletes the old ones, so that the original text is
// gone from the database's files. It holds an ACCESS EXCLUSIVE lock on
// each table while it rewrites it: every other reader and writer of
// that table waits, for a time proportional to the table's size. What
// PostgreSQL keeps outside the tables (its write-ahead log in pg_wal,
// until it recycles the segments; archives and backups) is the
// server's, beyond a client's reach.
func (s *Store) Scrub(ctx context.Context) error {
	for _, t := range scrubbed {
		if _, err := s.pool.Exec(ctx, `VACUUM (FULL) `+t); err != nil {
			return fmt.Errorf("scrub: VACUUM FULL %s: %w", t, err)
		}
	}
	return nil
}
