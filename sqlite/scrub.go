package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/loomhq/loom/synclog"
)

// What a scrub still has to do, kept in sync_state's row 'scrub' (any
// store has the table; the row is not sync's): 'vacuum' everything
// (Scrub), 'wal' only empty the write-ahead log, which readers held up
// the last time.
const (
	scrubAll = "vacuum"
	scrubWAL = "wal"

	scrubMarkSQL = `INSERT INTO sync_state (name, value) VALUES ('scrub', ?1)
		ON CONFLICT (name) DO UPDATE SET value = CASE WHEN value = 'vacuum' THEN value ELSE excluded.value END`
	scrubReadSQL = `SELECT coalesce((SELECT value FROM sync_state WHERE name = 'scrub'), '')`
)

// ErrWALBusy reports a scrub whose last step, emptying the write-ahead
// log, other processes reading the store held up for longer than the
// store's busy timeout (30 s). The log may still hold pages of the text
// replaced: the next scrub (the next loom secrets redact or loom sync)
// empties it, and SQLite deletes it when the last process using the
// store closes it.
var ErrWALBusy = errors.New("another process kept reading the store")

// MarkScrub keeps in the store that its files are to be scrubbed
// (Scrub), until a scrub has ended: `loom secrets redact` marks the
// store before it replaces anything, so that a redaction stopped before
// its end (Ctrl+C, a crash) is scrubbed by the next redact or sync
// (ScrubIfPending).
func (s *Store) MarkScrub(ctx context.Context) error {
	if _, err := s.writer.ExecContext(ctx, scrubMarkSQL, scrubAll); err != nil {
		return fmt.Errorf("mark %s to scrub: %w", s.path, err)
	}
	return nil
}

// Replaced implements sessionstore.ApplySteps: a record applied replaced
// text by redaction markers, and the old text must not stay readable in
// the store's files; the sync that applied it scrubs the store once it
// has applied its records (ScrubIfPending).
func (w syncTx) Replaced(ctx context.Context) error {
	if _, err := w.ExecContext(ctx, scrubMarkSQL, scrubAll); err != nil {
		return fmt.Errorf("mark the store to scrub: %w", err)
	}
	return nil
}

// Scrub removes from the store's files what rewritten messages left
// behind: the search index's entries of their old text, which stay in
// its older segments until they are merged (the index is merged whole:
// 'optimize'), the old rows in free pages and in the unused space of
// pages (the file is rebuilt: VACUUM), and the copies of pages in the
// write-ahead log (checkpointed and truncated to nothing). `loom secrets
// redact` runs it after replacing secrets, and a sync after applying
// another machine's redaction, so that the original text is gone from
// the store's files too. It takes time proportional to the store's
// size. When other processes reading the store keep the write-ahead log
// from being emptied, it returns ErrWALBusy, and the store stays marked
// for the next scrub to empty it.
func (s *Store) Scrub(ctx context.Context) error {
	for _, q := range []string{
		`INSERT INTO bodies_fts (bodies_fts) VALUES ('optimize')`,
		`VACUUM`,
	} {
		if _, err := s.writer.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("scrub %s: %s: %w", s.path, q, err)
		}
	}
	return s.emptyWAL(ctx)
}

// ScrubIfPending scrubs the store when it is marked to (MarkScrub, a
// record applied that replaced text, or a scrub that could not empty
// the write-ahead log), and reports whether it did. Checking costs one
// read of one row.
func (s *Store) ScrubIfPending(ctx context.Context) (bool, error) {
	var mark string
	if err := (reads{s}).QueryRowContext(ctx, scrubReadSQL).Scan(&mark); err != nil {
		return false, fmt.Errorf("read %s: %w", s.path, err)
	}
	switch mark {
	case "":
		return false, nil
	case scrubWAL:
		return true, s.emptyWAL(ctx)
	}
	return true, s.Scrub(ctx)
}

// emptyWAL lets the scrub's mark go and checkpoints the write-ahead log
// into the file, truncating it to nothing. SQLite waits for the readers
// that still read older pages from the log, up to the busy timeout;
// when they hold it up longer, the log is not emptied, the mark is set
// to empty it next time, and the error is ErrWALBusy.
func (s *Store) emptyWAL(ctx context.Context) error {
	if _, err := s.writer.ExecContext(ctx, `DELETE FROM sync_state WHERE name = 'scrub'`); err != nil {
		return fmt.Errorf("scrub %s: %w", s.path, err)
	}
	var busy, frames, done int
	if err := s.writer.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &done); err != nil {
		return fmt.Errorf("scrub %s: checkpoint: %w", s.path, err)
	}
	if busy == 0 {
		return nil
	}
	if _, err := s.writer.ExecContext(ctx, scrubMarkSQL, scrubWAL); err != nil {
		return fmt.Errorf("scrub %s: %w", s.path, err)
	}
	return fmt.Errorf("%w throughout: its write-ahead log %s-wal may still hold pages of the text replaced; the next loom secrets redact or loom sync empties it, and SQLite deletes it when the last process using the store closes it", ErrWALBusy, s.path)
}

// logPage is how many rows of the sync log RedactLog reads at once.
const logPage = 256

// RedactLog rewrites the records of the store's sync log (of every host
// the store has been) that redact changes: it is given a record's
// payloads (one, or the fragments of one, in order) and returns them
// redacted, nil to leave them. A rewritten record keeps its index,
// stamp and number of fragments, and the digest of what it held before
// is kept beside it (table sync_redacted), so that a sync still takes
// the hub's copy of it, pushed before, as the same record
// (synclog.LogRecord.Holds). It returns how many rows it rewrote. Each
// page of rows is rewritten in one transaction; a row another process
// changed meanwhile is left to the next run.
func (s *Store) RedactLog(ctx context.Context, redact func(payloads [][]byte) ([][]byte, error)) (int, error) {
	type row struct {
		idx     int64
		payload []byte
	}
	read := func(after int64, limit int) ([]row, error) {
		rows, err := reads{s}.QueryContext(ctx, `SELECT idx, payload FROM sync_log WHERE idx > ? ORDER BY idx LIMIT ?`, after, limit)
		if err != nil {
			return nil, fmt.Errorf("read sync log: %w", err)
		}
		defer rows.Close()
		var out []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.idx, &r.payload); err != nil {
				return nil, fmt.Errorf("read sync log: %w", err)
			}
			out = append(out, r)
		}
		return out, rows.Err()
	}
	rewritten := 0
	var after int64
	for {
		page, err := read(after, logPage)
		if err != nil || len(page) == 0 {
			return rewritten, err
		}
		type change struct {
			rows []row
			to   [][]byte
		}
		var changes []change
		for i := 0; i < len(page); {
			group := page[i : i+1]
			if part, of, ok := fragmentOf(page[i].payload); ok {
				if part != 1 {
					i++ // a fragment of a record cut short: left as it is
					continue
				}
				if i+of > len(page) {
					whole, err := read(page[i].idx-1, of)
					if err != nil {
						return rewritten, err
					}
					page = append(page[:i], whole...)
				}
				group = page[i:min(len(page), i+of)]
			}
			i += len(group)
			payloads := make([][]byte, len(group))
			for j, r := range group {
				payloads[j] = r.payload
			}
			to, err := redact(payloads)
			if err != nil {
				return rewritten, fmt.Errorf("redact record %d of the sync log: %w", group[0].idx, err)
			}
			if to != nil && len(to) == len(group) {
				changes = append(changes, change{group, to})
			}
		}
		after = page[len(page)-1].idx
		if len(changes) == 0 {
			continue
		}
		err = s.withTx(ctx, func(tx *sql.Tx) error {
			for _, c := range changes {
				for j, r := range c.rows {
					d := sha256.Sum256(r.payload)
					res, err := tx.ExecContext(ctx, `UPDATE sync_log SET payload = ? WHERE idx = ? AND payload = ?`, c.to[j], r.idx, r.payload)
					if err != nil {
						return err
					}
					if n, _ := res.RowsAffected(); n == 0 {
						continue
					}
					if _, err := tx.ExecContext(ctx, `INSERT INTO sync_redacted (idx, was) VALUES (?, ?)
						ON CONFLICT (idx) DO UPDATE SET was = was || excluded.was`, r.idx, d[:]); err != nil {
						return err
					}
					rewritten++
				}
			}
			return nil
		})
		if err != nil {
			return rewritten, fmt.Errorf("rewrite the sync log of %s: %w", s.path, err)
		}
	}
}

// fragmentOf reads the part and count of payload when it is a fragment
// (synclog.TypeFragment).
func fragmentOf(payload []byte) (part, of int, ok bool) {
	if len(payload) < 11 || payload[0] != synclog.FormatVersion || synclog.Type(payload[1]) != synclog.TypeFragment {
		return 0, 0, false
	}
	return int(binary.BigEndian.Uint32(payload[3:])), int(binary.BigEndian.Uint32(payload[7:])), true
}
