package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loomhq/loom"
)

var _ loom.TokenStore = (*Store)(nil)

const tokenColumns = `id, user_id, name, created_at, last_used_at, revoked_at, expires_at`

func scanToken(row scanner) (*loom.Token, error) {
	var t loom.Token
	var created, used, revoked, expires sql.NullString
	if err := row.Scan(&t.ID, &t.UserID, &t.Name, &created, &used, &revoked, &expires); err != nil {
		return nil, err
	}
	t.CreatedAt, t.LastUsedAt, t.RevokedAt, t.ExpiresAt = parseTime(created), optTime(used), optTime(revoked), optTime(expires)
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
	secret := loom.NewTokenSecret()
	now := s.Now().UTC().Truncate(time.Millisecond)
	t := &loom.Token{ID: loom.NewID(), UserID: userID, Name: name, CreatedAt: now}
	var expires sql.NullString
	if ttl > 0 {
		at := now.Add(ttl)
		t.ExpiresAt = &at
		expires = sql.NullString{String: loom.FormatTime(at), Valid: true}
	}
	_, err := s.writer.ExecContext(ctx, `INSERT INTO tokens (id, user_id, name, hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
		t.ID, t.UserID, t.Name, loom.HashToken(secret), loom.FormatTime(t.CreatedAt), expires)
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
		q += ` WHERE user_id = ?`
		args = append(args, userID)
	}
	rows, err := s.reader.QueryContext(ctx, q+` ORDER BY created_at, id`, args...)
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

// Authenticate implements loom.TokenStore. It reads on the reader pool
// and writes last_used_at at most once per loom.TokenUseInterval, so that
// authenticated reads do not queue on the one writer.
func (s *Store) Authenticate(ctx context.Context, secret string) (*loom.Token, error) {
	if secret == "" {
		return nil, loom.TokenNotFound()
	}
	t, err := scanToken(reads{s}.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = ?`, loom.HashToken(secret)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, loom.TokenNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	now := s.Now()
	if t.RevokedAt != nil || t.Expired(now) {
		return nil, loom.TokenNotFound()
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= loom.TokenUseInterval {
		// Best effort: a busy store must not turn a valid token away.
		if _, err := s.writer.ExecContext(ctx, `UPDATE tokens SET last_used_at = ? WHERE id = ?`, loom.FormatTime(now), t.ID); err == nil {
			t.LastUsedAt = &now
		}
	}
	return t, nil
}

// RevokeToken implements loom.TokenStore. Revoking a revoked token keeps
// the first revocation time.
func (s *Store) RevokeToken(ctx context.Context, id string) error {
	res, err := s.writer.ExecContext(ctx, `UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`, s.now(), id)
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return loom.Errorf(loom.ENOTFOUND, "no token %q", id)
	}
	return nil
}
