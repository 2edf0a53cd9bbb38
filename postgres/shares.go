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

// CreateShare implements loom.ShareStore.
func (s *Store) CreateShare(ctx context.Context, userID string, blob []byte, expires time.Time) (*loom.Share, error) {
	now := ms(s.Now())
	sh, err := loom.NewShare(userID, blob, expires, now)
	switch {
	case err != nil:
		return nil, err
	case !storable(userID):
		return nil, loom.Errorf(loom.EINVALID, "a share's user must be UTF-8 text without NUL bytes")
	}
	err = s.withTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE shares SET blob = NULL WHERE blob IS NOT NULL AND expires_at <= $1`, now); err != nil {
			return fmt.Errorf("delete expired shares: %w", err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO shares (id, user_id, created_at, expires_at, size, blob) VALUES ($1, $2, $3, $4, $5, $6)`,
			sh.ID, sh.UserID, sh.CreatedAt, sh.ExpiresAt, sh.Size, blob)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create share: %w", serverError(err))
	}
	return sh, nil
}

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

// RevokeShare implements loom.ShareStore.
func (s *Store) RevokeShare(ctx context.Context, userID, id string) error {
	if !storable(userID, id) {
		return loom.Errorf(loom.ENOTFOUND, "no share %q of yours", id)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE shares SET revoked_at = coalesce(revoked_at, $1), blob = NULL WHERE id = $2 AND user_id = $3`, ms(s.Now()), id, userID)
	if err != nil {
		return fmt.Errorf("revoke share %s: %w", id, serverError(err))
	}
	if tag.RowsAffected() == 0 {
		return loom.Errorf(loom.ENOTFOUND, "no share %q of yours", id)
	}
	return nil
}
