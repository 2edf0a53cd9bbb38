package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// Tokens implements loom.TokenStore.
func (s *Store) Tokens(ctx context.Context, userID string) ([]*loom.Token, error) {
	q := `SELECT ` + rowscan.TokenColumns + ` FROM tokens`
	var args []any
	if userID != "" {
		q += ` WHERE user_id = ?`
		args = append(args, userID)
	}
	out, err := rowscan.All(ctx, rowsOf{reads{s}}, rowscan.Token, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// Authenticate implements loom.TokenStore. It reads on the reader pool
// and writes last_used_at at most once per loom.TokenUseInterval, so that
// authenticated reads do not queue on the one writer.
func (s *Store) Authenticate(ctx context.Context, secret string) (*loom.Token, error) {
	return sqlstore.AuthenticateWith(secret, s.Now(), func(hash string) (*loom.Token, error) {
		t, err := rowscan.Token(reads{s}.QueryRowContext(ctx, `SELECT `+rowscan.TokenColumns+` FROM tokens WHERE hash = ?`, hash))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		return t, err
	}, func(id string, at time.Time) error {
		_, err := s.writer.ExecContext(ctx, `UPDATE tokens SET last_used_at = ? WHERE id = ?`, loom.FormatTime(at), id)
		return err
	})
}

// InsertToken implements sessionstore.Grants.
func (e engine) InsertToken(ctx context.Context, t *loom.Token, hash string) error {
	err := e.s.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tokens (id, user_id, name, hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
			t.ID, t.UserID, t.Name, hash, loom.FormatTime(t.CreatedAt), nullTime(t.ExpiresAt))
		if err == nil && t.Scope != loom.ScopeFull {
			_, err = tx.ExecContext(ctx, `INSERT INTO token_scopes (token_id, scope) VALUES (?, ?)`, t.ID, t.Scope)
		}
		return err
	})
	if err != nil {
		return e.s.full(fmt.Errorf("create token: %w", err))
	}
	return nil
}

// MarkTokenRevoked implements sessionstore.Grants.
func (e engine) MarkTokenRevoked(ctx context.Context, id string, now time.Time) (bool, error) {
	res, err := e.s.writer.ExecContext(ctx, `UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`, loom.FormatTime(now), id)
	if err != nil {
		return false, e.s.full(fmt.Errorf("revoke token %s: %w", id, err))
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}
