package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

var _ loom.ShareStore = (*Store)(nil)

// Shares implements loom.ShareStore.
func (s *Store) Shares(ctx context.Context, userID string) ([]*loom.Share, error) {
	out, err := rowscan.All(ctx, rowsOf{reads{s}}, rowscan.Share,
		`SELECT `+rowscan.ShareColumns+` FROM shares WHERE user_id = ? ORDER BY created_at DESC, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list shares: %w", err)
	}
	return out, nil
}

// ShareBlob implements loom.ShareStore.
func (s *Store) ShareBlob(ctx context.Context, id string) ([]byte, error) {
	var blob []byte
	err := reads{s}.QueryRowContext(ctx, `SELECT blob FROM shares WHERE id = ? AND revoked_at IS NULL AND expires_at > ? AND blob IS NOT NULL`,
		id, s.now()).Scan(&blob)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, loom.ShareNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("read share: %w", err)
	}
	return blob, nil
}

// InsertShare implements sessionstore.Grants.
func (e engine) InsertShare(ctx context.Context, sh *loom.Share, blob []byte, now time.Time) error {
	err := e.s.shareWrite(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE shares SET blob = NULL WHERE blob IS NOT NULL AND expires_at <= ?`, loom.FormatTime(now)); err != nil {
			return fmt.Errorf("delete expired shares: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO shares (id, user_id, created_at, expires_at, size, blob) VALUES (?, ?, ?, ?, ?, ?)`,
			sh.ID, sh.UserID, loom.FormatTime(sh.CreatedAt), loom.FormatTime(sh.ExpiresAt), sh.Size, blob)
		return err
	})
	if err != nil {
		return e.s.full(fmt.Errorf("create share: %w", err))
	}
	return nil
}

// MarkShareRevoked implements sessionstore.Grants.
func (e engine) MarkShareRevoked(ctx context.Context, user, id string, now time.Time) (bool, error) {
	var n int64
	err := e.s.shareWrite(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE shares SET revoked_at = coalesce(revoked_at, ?), blob = NULL WHERE id = ? AND user_id = ?`,
			loom.FormatTime(now), id, user)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return false, e.s.full(fmt.Errorf("revoke share %s: %w", id, err))
	}
	return n > 0, nil
}

// shareWrite runs fn in one write transaction with secure_delete on, so
// that the ciphertext of a share it deletes is overwritten with zeros in
// the file rather than left in a free page, and then checkpoints the
// write-ahead log, which held copies of the pages, and truncates it. A
// checkpoint that readers hold up leaves the log to the next one.
func (s *Store) shareWrite(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.readOnly {
		return loom.Errorf(loom.EINVALID, "cannot write %s: it is open read-only", s.path)
	}
	conn, err := s.writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return fmt.Errorf("secure_delete: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = OFF`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return nil
}
