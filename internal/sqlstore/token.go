package sqlstore

import (
	"fmt"
	"time"

	"github.com/loomhq/loom"
)

// AuthenticateWith is TokenStore.Authenticate with the engine's reads
// and writes: find returns the token stored with a secret's hash (nil
// when there is none); touch records that token id was used at now, at
// most once per TokenUseInterval, best effort (a busy store must not turn
// a valid token away).
func AuthenticateWith(secret string, now time.Time, find func(hash string) (*loom.Token, error), touch func(id string, at time.Time) error) (*loom.Token, error) {
	if secret == "" {
		return nil, loom.TokenNotFound()
	}
	t, err := find(loom.HashToken(secret))
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	if t == nil || t.RevokedAt != nil || t.Expired(now) {
		return nil, loom.TokenNotFound()
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= loom.TokenUseInterval {
		if touch(t.ID, now) == nil {
			t.LastUsedAt = &now
		}
	}
	return t, nil
}
