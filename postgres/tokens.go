package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
)

var _ loom.TokenStore = (*Store)(nil)

const tokenColumns = `id, user_id, name, created_at, last_used_at, revoked_at, expires_at`

func scanToken(row pgx.Row) (*loom.Token, error) {
	var t loom.Token
	var used, revoked, expires *time.Time
	if err := row.Scan(&t.ID, &t.UserID, &t.Name, &t.CreatedAt, &used, &revoked, &expires); err != nil {
		return nil, err
	}
	t.CreatedAt, t.LastUsedAt, t.RevokedAt, t.ExpiresAt = utc(t.CreatedAt), optTime(used), optTime(revoked), optTime(expires)
	return &t, nil
}

// CreateToken implements loom.TokenStore.
func (s *Store) CreateToken(ctx context.Context, userID, name string, ttl time.Duration) (*loom.Token, string, error) {
	if userID == "" {
		return nil, "", loom.Errorf(loom.EINVALID, "a token needs a user")
	}
	if err := loom.ValidTokenName(name); err != nil {
		return nil, "", err
	}
	if err := loom.ValidTokenTTL(ttl); err != nil {
		return nil, "", err
	}
	if !storable(userID, name) {
		return nil, "", loom.Errorf(loom.EINVALID, "token user and name must be UTF-8 text without NUL bytes")
	}
	secret := loom.NewTokenSecret()
	t := &loom.Token{ID: loom.NewID(), UserID: userID, Name: name, CreatedAt: ms(s.Now())}
	if ttl > 0 {
		at := ms(t.CreatedAt.Add(ttl))
		t.ExpiresAt = &at
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO tokens (id, user_id, name, hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.ID, t.UserID, t.Name, loom.HashToken(secret), t.CreatedAt, t.ExpiresAt)
	if err != nil {
		return nil, "", fmt.Errorf("create token: %w", err)
	}
	return t, secret, nil
}

// Tokens implements loom.TokenStore.
func (s *Store) Tokens(ctx context.Context, userID string) ([]*loom.Token, error) {
	q := `SELECT ` + tokenColumns + ` FROM tokens`
	var args []any
	if userID != "" {
		if !storable(userID) {
			return nil, nil
		}
		q += ` WHERE user_id = $1`
		args = append(args, userID)
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []*loom.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Authenticate implements loom.TokenStore. It writes last_used_at at most
// once per loom.TokenUseInterval.
func (s *Store) Authenticate(ctx context.Context, secret string) (*loom.Token, error) {
	if secret == "" {
		return nil, loom.TokenNotFound()
	}
	t, err := scanToken(s.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = $1`, loom.HashToken(secret)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, loom.TokenNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	now := ms(s.Now())
	if t.RevokedAt != nil || t.Expired(now) {
		return nil, loom.TokenNotFound()
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= loom.TokenUseInterval {
		// Best effort: a failed bookkeeping write must not turn a valid
		// token away.
		if _, err := s.pool.Exec(ctx, `UPDATE tokens SET last_used_at = $1 WHERE id = $2`, now, t.ID); err == nil {
			t.LastUsedAt = &now
		}
	}
	return t, nil
}

// RevokeToken implements loom.TokenStore. Revoking a revoked token keeps
// the first revocation time.
func (s *Store) RevokeToken(ctx context.Context, id string) error {
	if !storable(id) {
		return loom.Errorf(loom.ENOTFOUND, "no token %q", id)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2`, ms(s.Now()), id)
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return loom.Errorf(loom.ENOTFOUND, "no token %q", id)
	}
	return nil
}
