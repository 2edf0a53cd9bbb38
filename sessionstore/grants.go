package sessionstore

import (
	"context"
	"time"

	"github.com/loomhq/loom"
)

// Grants is what a Store asks of the engine to keep tokens and shares,
// each one write of the engine's (its transaction, its wording of an
// error); what a token or a share is, and what it may hold, are the
// domain's (loom.NewScopedToken, loom.NewShare).
type Grants interface {
	// InsertToken keeps t, whose secret hashes to hash.
	InsertToken(ctx context.Context, t *loom.Token, hash string) error
	// MarkTokenRevoked marks token id revoked at now, unless it was;
	// false when there is no such token.
	MarkTokenRevoked(ctx context.Context, id string, now time.Time) (bool, error)
	// InsertShare keeps sh and its blob, after letting go the blobs of
	// the shares expired at now.
	InsertShare(ctx context.Context, sh *loom.Share, blob []byte, now time.Time) error
	// MarkShareRevoked marks user's share id revoked at now, unless it
	// was, and lets its blob go; false when user has no such share.
	MarkShareRevoked(ctx context.Context, user, id string, now time.Time) (bool, error)
}

// CreateToken implements loom.TokenStore: a token of every scope.
func (s *Store) CreateToken(ctx context.Context, userID, name string, ttl time.Duration) (*loom.Token, string, error) {
	return s.CreateScopedToken(ctx, userID, name, loom.ScopeFull, ttl)
}

// CreateScopedToken implements loom.TokenStore.
func (s *Store) CreateScopedToken(ctx context.Context, userID, name, scope string, ttl time.Duration) (*loom.Token, string, error) {
	t, secret, err := loom.NewScopedToken(userID, name, scope, ttl, s.eng.Now())
	if err != nil {
		return nil, "", err
	}
	if err := s.eng.InsertToken(ctx, t, loom.HashToken(secret)); err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// RevokeToken implements loom.TokenStore: revoking a revoked token
// again changes nothing; an unknown one is ENOTFOUND.
func (s *Store) RevokeToken(ctx context.Context, id string) error {
	ok, err := s.eng.MarkTokenRevoked(ctx, id, s.eng.Now())
	if err != nil {
		return err
	}
	if !ok {
		return loom.Errorf(loom.ENOTFOUND, "no token %q", id)
	}
	return nil
}

// CreateShare implements loom.ShareStore.
func (s *Store) CreateShare(ctx context.Context, userID string, blob []byte, expires time.Time) (*loom.Share, error) {
	now := s.eng.Now()
	sh, err := loom.NewShare(userID, blob, expires, now)
	if err != nil {
		return nil, err
	}
	if err := s.eng.InsertShare(ctx, sh, blob, now); err != nil {
		return nil, err
	}
	return sh, nil
}

// RevokeShare implements loom.ShareStore: only its user revokes a
// share; another's, or an unknown one, is ENOTFOUND.
func (s *Store) RevokeShare(ctx context.Context, userID, id string) error {
	ok, err := s.eng.MarkShareRevoked(ctx, userID, id, s.eng.Now())
	if err != nil {
		return err
	}
	if !ok {
		return loom.Errorf(loom.ENOTFOUND, "no share %q of yours", id)
	}
	return nil
}
