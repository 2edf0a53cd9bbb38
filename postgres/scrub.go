package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
//
// VACUUM FULL keeps the old row versions that a transaction still open
// may read, so Scrub first waits, up to scrubWait, for the transactions
// that began before it to end, those of every database of the server
// (another database's redaction beside it was seen to leave old row
// versions here) (another process's
// long-running read keeps them). When one is still open then, the
// tables are rewritten all the same and the error names it: what it
// kept goes at the next scrub, after it ends.
func (s *Store) Scrub(ctx context.Context) error {
	older, err := s.waitOlderTransactions(ctx, scrubWait)
	if err != nil {
		return err
	}
	for _, t := range scrubbed {
		if _, err := s.pool.Exec(ctx, `VACUUM (FULL) `+t); err != nil {
			return fmt.Errorf("scrub: VACUUM FULL %s: %w", t, err)
		}
	}
	if older != 0 {
		return fmt.Errorf("scrub: process %d of the PostgreSQL server kept a transaction open from before the redaction, so the tables' files may still hold the old text; run loom secrets redact again once it has ended", older)
	}
	return nil
}

// scrubWait bounds how long Scrub waits for older transactions.
const scrubWait = 30 * time.Second

// waitOlderTransactions waits until no other backend of the server
// holds back the removal of row versions changed before now (its
// snapshot or its own transaction older than now's), for at most limit,
// and returns the pid of one that still does then (0 when none does).
// An autovacuum's analyze, a long read or an idle transaction of
// another process are such backends. Those of other databases count
// too: with another database's redaction running beside it (its own
// VACUUM FULL), the old row versions were seen to stay in this one's
// files when only this database's backends were waited for.
func (s *Store) waitOlderTransactions(ctx context.Context, limit time.Duration) (int32, error) {
	// The transaction id now: every change of the redaction is older.
	var now string
	if err := s.pool.QueryRow(ctx, `SELECT (txid_current() % 4294967296)::text`).Scan(&now); err != nil {
		return 0, fmt.Errorf("scrub: %w", err)
	}
	deadline := time.Now().Add(limit)
	wait := 20 * time.Millisecond
	for {
		var pid int32
		err := s.pool.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
			WHERE pid <> pg_backend_pid()
			  AND (backend_xmin IS NOT NULL AND age(backend_xmin) >= age($1::xid)
			    OR backend_xid IS NOT NULL AND age(backend_xid) >= age($1::xid))
			LIMIT 1`, now).Scan(&pid)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("scrub: %w", err)
		}
		if time.Now().After(deadline) {
			return pid, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}
