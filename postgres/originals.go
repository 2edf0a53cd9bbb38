package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// The original bytes of imported files (loom.OriginalsKeeper).

// OriginalFiles implements loom.OriginalsKeeper.
func (s *Store) OriginalFiles(ctx context.Context, userID, tool string) ([]loom.OriginalFile, error) {
	out, err := rowscan.All(ctx, rowsOf{s.pool}, rowscan.OriginalFile, `SELECT `+rowscan.OriginalFileColumns+`
		FROM originals o
		WHERE o.user_id = $1 AND ($2 = '' OR o.tool = $2)
		  AND o.off = (SELECT MAX(off) FROM originals m WHERE m.user_id = o.user_id AND m.path = o.path)
		ORDER BY o.path`, userID, tool)
	if err != nil {
		return nil, fmt.Errorf("read kept originals: %w", serverError(err))
	}
	return out, nil
}

// KeepOriginals implements sessionstore.ImportSteps: chunks of the
// files an import read, in its transaction.
func (w *writeTx) KeepOriginals(ctx context.Context, chunks []loom.OriginalChunk, strict bool) error {
	for _, c := range chunks {
		if err := keepOriginal(ctx, w.tx, ms(w.s.Now()), c, strict); err != nil {
			return err
		}
	}
	return nil
}

// keepOriginal stores c inside tx. A chunk that does not follow the kept
// bytes is EINVALID when strict, else left out (loom.ImportWrite's
// Originals say why).
func keepOriginal(ctx context.Context, tx pgx.Tx, now time.Time, c loom.OriginalChunk, strict bool) error {
	if !storable(c.UserID, c.Path, c.Tool, c.Bundle, c.SessionID) {
		return loom.Errorf(loom.EINVALID, "a kept original's path must be UTF-8 text without NUL bytes")
	}
	// One keeper of a path at a time: the check of where its bytes
	// end holds until the chunk is in.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('originals:' || $1 || ':' || $2, 0))`, c.UserID, c.Path); err != nil {
		return fmt.Errorf("keep original of %s: %w", c.Path, serverError(err))
	}
	if c.Offset == 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM originals WHERE user_id = $1 AND path = $2`, c.UserID, c.Path); err != nil {
			return fmt.Errorf("keep original of %s: %w", c.Path, serverError(err))
		}
	} else {
		var end *int64
		if err := tx.QueryRow(ctx, `SELECT MAX(off + size) FROM originals WHERE user_id = $1 AND path = $2`, c.UserID, c.Path).Scan(&end); err != nil {
			return fmt.Errorf("keep original of %s: %w", c.Path, serverError(err))
		}
		var e int64
		if end != nil {
			e = *end
		}
		if e != c.Offset {
			if !strict {
				return nil
			}
			return loom.Errorf(loom.EINVALID, "a kept original of %s at %d does not follow its kept bytes, which end at %d", c.Path, c.Offset, e)
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO originals (user_id, path, off, size, tool, bundle, session_id, tail, mtime_ns, kept_at, data)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		c.UserID, c.Path, c.Offset, c.Size, c.Tool, c.Bundle, c.SessionID, c.Tail, c.ModTime.UnixNano(), now, c.Data)
	if err != nil {
		return fmt.Errorf("keep original of %s: %w", c.Path, serverError(err))
	}
	if c.SessionID != "" {
		if _, err := tx.Exec(ctx, `UPDATE originals SET session_id = $1 WHERE user_id = $2 AND bundle = $3 AND session_id = ''`,
			c.SessionID, c.UserID, c.Bundle); err != nil {
			return fmt.Errorf("keep original of %s: %w", c.Path, serverError(err))
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
		var mt int64
		err := s.pool.QueryRow(ctx, `SELECT off, size, tool, bundle, session_id, tail, mtime_ns, kept_at, data
			FROM originals WHERE user_id = $1 AND path = $2 AND off > $3 ORDER BY off LIMIT 1`, userID, path, off).
			Scan(&c.Offset, &c.Size, &c.Tool, &c.Bundle, &c.SessionID, &c.Tail, &mt, &c.KeptAt, &c.Data)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read kept original of %s: %w", path, serverError(err))
		}
		c.ModTime, c.KeptAt = time.Unix(0, mt).UTC(), c.KeptAt.UTC()
		if err := fn(c); err != nil {
			return err
		}
		off = c.Offset
	}
}

// RewriteOriginal implements loom.OriginalsKeeper.
func (s *Store) RewriteOriginal(ctx context.Context, userID, path string, offset int64, data []byte) error {
	tag, err := s.pool.Exec(ctx, `UPDATE originals SET data = $1 WHERE user_id = $2 AND path = $3 AND off = $4`, data, userID, path, offset)
	if err != nil {
		return fmt.Errorf("rewrite kept original of %s: %w", path, serverError(err))
	}
	if tag.RowsAffected() == 0 {
		return loom.Errorf(loom.ENOTFOUND, "no kept original of %s at %d", path, offset)
	}
	return nil
}

// DeleteOriginals implements loom.OriginalsKeeper.
func (s *Store) DeleteOriginals(ctx context.Context, userID string, sessionIDs []string) (int, error) {
	// Those of sessionIDs, those of sessions purged before (from the
	// trash, when it expired) that the store no longer holds, and a file
	// of several sessions (a database) once none of them is left.
	tag, err := s.pool.Exec(ctx, `DELETE FROM originals WHERE user_id = $1 AND (session_id = ANY($2)
		OR (session_id != '' AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = originals.session_id))
		OR (session_id = '' AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = originals.user_id
			AND s.source_tool = originals.tool AND s.source_path = originals.bundle)))`, userID, sessionIDs)
	if err != nil {
		return 0, fmt.Errorf("delete kept originals: %w", serverError(err))
	}
	return int(tag.RowsAffected()), nil
}

var _ loom.OriginalsKeeper = (*Store)(nil)
