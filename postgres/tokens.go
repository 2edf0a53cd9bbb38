package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// Tokens implements loom.TokenStore.
func (s *Store) Tokens(ctx context.Context, userID string) ([]*loom.Token, error) {
	if !storable(userID) {
		return nil, nil
	}
	out, err := rowscan.All(ctx, rowsOf{s.pool}, rowscan.Token, `SELECT `+rowscan.TokenColumns+` FROM tokens WHERE $1 = '' OR user_id = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// Authenticate implements loom.TokenStore. It writes last_used_at at most
// once per loom.TokenUseInterval.
func (s *Store) Authenticate(ctx context.Context, secret string) (*loom.Token, error) {
	return sqlstore.AuthenticateWith(secret, ms(s.Now()), func(hash string) (*loom.Token, error) {
		t, err := rowscan.Token(s.pool.QueryRow(ctx, `SELECT `+rowscan.TokenColumns+` FROM tokens WHERE hash = $1`, hash))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		return t, err
	}, func(id string, at time.Time) error {
		_, err := s.pool.Exec(ctx, `UPDATE tokens SET last_used_at = $1 WHERE id = $2`, at, id)
		return err
	})
}

// InsertToken implements sessionstore.Grants.
func (e engine) InsertToken(ctx context.Context, t *loom.Token, hash string) error {
	if !storable(t.UserID, t.Name) {
		return loom.Errorf(loom.EINVALID, "token user and name must be UTF-8 text without NUL bytes")
	}
	err := e.s.withTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO tokens (id, user_id, name, hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			t.ID, t.UserID, t.Name, hash, t.CreatedAt, t.ExpiresAt)
		if err == nil && t.Scope != loom.ScopeFull {
			_, err = tx.Exec(ctx, `INSERT INTO token_scopes (token_id, scope) VALUES ($1, $2)`, t.ID, t.Scope)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create token: %w", serverError(err))
	}
	return nil
}

// MarkTokenRevoked implements sessionstore.Grants.
func (e engine) MarkTokenRevoked(ctx context.Context, id string, now time.Time) (bool, error) {
	if !storable(id) {
		return false, nil // no token has such an id
	}
	tag, err := e.s.pool.Exec(ctx, `UPDATE tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2`, now, id)
	if err != nil {
		return false, fmt.Errorf("revoke token %s: %w", id, serverError(err))
	}
	return tag.RowsAffected() > 0, nil
}
