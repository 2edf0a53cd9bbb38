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

var _ loom.ShareStore = (*Store)(nil)

// Shares implements loom.ShareStore.
func (s *Store) Shares(ctx context.Context, userID string) ([]*loom.Share, error) {
	if !storable(userID) {
		return nil, nil
	}
	out, err := rowscan.All(ctx, rowsOf{s.pool}, rowscan.Share,
		`SELECT `+rowscan.ShareColumns+` FROM shares WHERE user_id = $1 ORDER BY created_at DESC, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list shares: %w", err)
	}
	return out, nil
}

// ShareBlob implements loom.ShareStore.
func (s *Store) ShareBlob(ctx context.Context, id string) ([]byte, error) {
	if !storable(id) {
		return nil, loom.ShareNotFound()
	}
	var blob []byte
	err := s.pool.QueryRow(ctx, `SELECT blob FROM shares WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2 AND blob IS NOT NULL`,
		id, ms(s.Now())).Scan(&blob)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, loom.ShareNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("read share: %w", serverError(err))
	}
	return blob, nil
}

// InsertShare implements sessionstore.Grants.
func (e engine) InsertShare(ctx context.Context, sh *loom.Share, blob []byte, now time.Time) error {
	if !storable(sh.UserID) {
		return loom.Errorf(loom.EINVALID, "a share's user must be UTF-8 text without NUL bytes")
	}
	err := e.s.withTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE shares SET blob = NULL WHERE blob IS NOT NULL AND expires_at <= $1`, now); err != nil {
			return fmt.Errorf("delete expired shares: %w", err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO shares (id, user_id, created_at, expires_at, size, blob) VALUES ($1, $2, $3, $4, $5, $6)`,
			sh.ID, sh.UserID, sh.CreatedAt, sh.ExpiresAt, sh.Size, blob)
		return err
	})
	if err != nil {
		return fmt.Errorf("create share: %w", serverError(err))
	}
	return nil
}

// MarkShareRevoked implements sessionstore.Grants.
func (e engine) MarkShareRevoked(ctx context.Context, user, id string, now time.Time) (bool, error) {
	if !storable(user, id) {
		return false, nil // no share has such a user or id
	}
	tag, err := e.s.pool.Exec(ctx, `UPDATE shares SET revoked_at = coalesce(revoked_at, $1), blob = NULL WHERE id = $2 AND user_id = $3`, now, id, user)
	if err != nil {
		return false, fmt.Errorf("revoke share %s: %w", id, serverError(err))
	}
	return tag.RowsAffected() > 0, nil
}
