package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// The original bytes of imported files (loom.OriginalsKeeper).

// OriginalFiles implements loom.OriginalsKeeper.
func (s *Store) OriginalFiles(ctx context.Context, userID, tool string) ([]loom.OriginalFile, error) {
	out, err := rowscan.All(ctx, rowsOf{reads{s}}, rowscan.OriginalFile, `SELECT `+rowscan.OriginalFileColumns+`
		FROM originals o
		WHERE o.user_id = ? AND (? = '' OR o.tool = ?)
		  AND o.off = (SELECT MAX(off) FROM originals m WHERE m.user_id = o.user_id AND m.path = o.path)
		ORDER BY o.path`, userID, tool, tool)
	if err != nil {
		return nil, fmt.Errorf("read kept originals: %w", err)
	}
	return out, nil
}

// KeepOriginals implements sessionstore.ImportSteps: chunks of the
// files an import read, in its transaction.
func (w writes) KeepOriginals(ctx context.Context, chunks []loom.OriginalChunk, strict bool) error {
	for _, c := range chunks {
		if err := keepOriginal(ctx, w.tx, w.s.Now(), c, strict); err != nil {
			return err
		}
	}
	return nil
}

// keepOriginal stores c inside tx. A chunk that does not follow the kept
// bytes is EINVALID when strict, else left out (loom.ImportWrite's
// Originals say why).
func keepOriginal(ctx context.Context, tx *sql.Tx, now time.Time, c loom.OriginalChunk, strict bool) error {
	if c.Offset == 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM originals WHERE user_id = ? AND path = ?`, c.UserID, c.Path); err != nil {
			return fmt.Errorf("keep original of %s: %w", c.Path, err)
		}
	} else {
		var end sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MAX(off + size) FROM originals WHERE user_id = ? AND path = ?`, c.UserID, c.Path).Scan(&end); err != nil {
			return fmt.Errorf("keep original of %s: %w", c.Path, err)
		}
		if end.Int64 != c.Offset {
			if !strict {
				return nil
			}
			return loom.Errorf(loom.EINVALID, "a kept original of %s at %d does not follow its kept bytes, which end at %d", c.Path, c.Offset, end.Int64)
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO originals (user_id, path, off, size, tool, bundle, session_id, tail, mtime_ns, kept_at, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.UserID, c.Path, c.Offset, c.Size, c.Tool, c.Bundle, c.SessionID, c.Tail, c.ModTime.UnixNano(), now.UnixNano(), c.Data)
	if err != nil {
		return fmt.Errorf("keep original of %s: %w", c.Path, err)
	}
	if c.SessionID != "" {
		// The bundle's session is known now: every chunk of its files
		// belongs to it.
		if _, err := tx.ExecContext(ctx, `UPDATE originals SET session_id = ? WHERE user_id = ? AND bundle = ? AND session_id = ''`,
			c.SessionID, c.UserID, c.Bundle); err != nil {
			return fmt.Errorf("keep original of %s: %w", c.Path, err)
		}
	}
	return nil
}

// OriginalChunks implements loom.OriginalsKeeper. It reads one chunk per
// query, so that no more than one is held.
func (s *Store) OriginalChunks(ctx context.Context, userID, path string, fn func(loom.OriginalChunk) error) error {
	off := int64(-1)
	for {
		c := loom.OriginalChunk{UserID: userID, Path: path}
		var mt, kept int64
		err := s.reader.QueryRowContext(ctx, `SELECT off, size, tool, bundle, session_id, tail, mtime_ns, kept_at, data
			FROM originals WHERE user_id = ? AND path = ? AND off > ? ORDER BY off LIMIT 1`, userID, path, off).
			Scan(&c.Offset, &c.Size, &c.Tool, &c.Bundle, &c.SessionID, &c.Tail, &mt, &kept, &c.Data)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read kept original of %s: %w", path, err)
		}
		c.ModTime, c.KeptAt = time.Unix(0, mt).UTC(), time.Unix(0, kept).UTC()
		if err := fn(c); err != nil {
			return err
		}
		off = c.Offset
	}
}

// RewriteOriginal implements loom.OriginalsKeeper.
func (s *Store) RewriteOriginal(ctx context.Context, userID, path string, offset int64, data []byte) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE originals SET data = ? WHERE user_id = ? AND path = ? AND off = ?`, data, userID, path, offset)
		if err != nil {
			return fmt.Errorf("rewrite kept original of %s: %w", path, err)
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return loom.Errorf(loom.ENOTFOUND, "no kept original of %s at %d", path, offset)
		}
		return nil
	})
}

// DeleteOriginals implements loom.OriginalsKeeper.
func (s *Store) DeleteOriginals(ctx context.Context, userID string, sessionIDs []string) (int, error) {
	n := 0
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		args := []any{userID}
		for _, id := range sessionIDs {
			args = append(args, id)
		}
		r, err := tx.ExecContext(ctx, `DELETE FROM originals WHERE user_id = ? AND session_id IN ('-'`+strings.Repeat(", ?", len(sessionIDs))+`)`, args...)
		if err != nil {
			return fmt.Errorf("delete kept originals: %w", err)
		}
		k, _ := r.RowsAffected()
		n = int(k)
		// And those of sessions purged before (from the trash, when it
		// expired) that the store no longer holds; a file of several
		// sessions (a database) once none of them is left.
		r, err = tx.ExecContext(ctx, `DELETE FROM originals WHERE user_id = ? AND CASE WHEN session_id != ''
			THEN NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = originals.session_id)
			ELSE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = originals.user_id
				AND s.source_tool = originals.tool AND s.source_path = originals.bundle) END`, userID)
		if err != nil {
			return fmt.Errorf("delete kept originals: %w", err)
		}
		k, _ = r.RowsAffected()
		n += int(k)
		return nil
	})
	return n, err
}

var _ loom.OriginalsKeeper = (*Store)(nil)
