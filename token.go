package loom

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// Token is an access token of the HTTP server. Each token belongs to one
// user; whoever presents it acts as that user until it is revoked or
// expires. The secret itself is never stored, only its hash.
type Token struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// ExpiresAt is when the token stops working; nil for never.
	ExpiresAt *time.Time `json:"expires_at"`
	// Scope is what the token may do: ScopeFull (the API, the
	// dashboard, MCP and sync) or ScopeShare (create, list and revoke
	// its user's share links, nothing else).
	Scope string `json:"scope"`
}

// Token scopes. Every token made before scopes existed is ScopeFull.
const (
	ScopeFull  = "full"
	ScopeShare = "share"
)

// ValidTokenScope checks a scope asked of a new token.
func ValidTokenScope(scope string) error {
	if scope != ScopeFull && scope != ScopeShare {
		return Errorf(EINVALID, "unknown token scope %q: want %s or %s", scope, ScopeFull, ScopeShare)
	}
	return nil
}

// Expired reports whether the token has expired at now.
func (t *Token) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

// MarshalJSON writes times with milliseconds.
func (t Token) MarshalJSON() ([]byte, error) {
	type plain Token
	return json.Marshal(struct {
		plain
		CreatedAt  jsonTime  `json:"created_at"`
		LastUsedAt *jsonTime `json:"last_used_at"`
		RevokedAt  *jsonTime `json:"revoked_at"`
		ExpiresAt  *jsonTime `json:"expires_at"`
	}{plain(t), jsonTime(t.CreatedAt), optTime(t.LastUsedAt), optTime(t.RevokedAt), optTime(t.ExpiresAt)})
}

// TokenStore keeps the server's access tokens. The sqlite and postgres
// stores implement it next to Store.
type TokenStore interface {
	// CreateToken stores a new token for user and returns it with its
	// secret, which is shown once and cannot be read back. A ttl above
	// zero makes the token expire that long after it is made (by the
	// store's clock); zero makes one that never expires.
	CreateToken(ctx context.Context, userID, name string, ttl time.Duration) (*Token, string, error)
	// CreateScopedToken is CreateToken for a token of scope (ScopeFull
	// or ScopeShare).
	CreateScopedToken(ctx context.Context, userID, name, scope string, ttl time.Duration) (*Token, string, error)
	// Tokens lists tokens, revoked ones included, oldest first; all
	// users' when userID is empty.
	Tokens(ctx context.Context, userID string) ([]*Token, error)
	// Authenticate returns the live token whose secret is given, noting
	// when it was used (at most once per TokenUseInterval); an unknown,
	// revoked or expired secret is ENOTFOUND.
	Authenticate(ctx context.Context, secret string) (*Token, error)
	// RevokeToken revokes the token with id for good.
	RevokeToken(ctx context.Context, id string) error
}

// TokenPrefix starts every token secret, so that a leaked one is easy to
// recognise (by secret scanners, too).
const TokenPrefix = "loom_"

// TokenUseInterval is how stale a token's last_used_at may be before
// Authenticate writes it again: a write per request would make every read
// of the API a write to the store.
const TokenUseInterval = time.Minute

// NewTokenSecret returns a fresh token secret: TokenPrefix and 256 random
// bits.
func NewTokenSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("loom: no randomness for a token: " + err.Error())
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// HashToken returns what the store keeps of a secret: the hex SHA-256 of
// it. A slow password hash would add nothing, since secrets are random
// and long.
func HashToken(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// ValidTokenName checks a token's label: one line, at most 100 bytes.
func ValidTokenName(name string) error {
	switch {
	case len(name) > 100:
		return Errorf(EINVALID, "token name is longer than 100 bytes")
	case strings.ContainsAny(name, "\r\n\x00"):
		return Errorf(EINVALID, "token name must be one line")
	}
	return nil
}

// ValidTokenTTL checks the lifetime asked of a new token: zero (never
// expires) or more.
func ValidTokenTTL(ttl time.Duration) error {
	if ttl < 0 {
		return Errorf(EINVALID, "a token's lifetime must not be negative")
	}
	return nil
}

// NewScopedToken checks what a new token is asked to be and makes it:
// userID's token named name, of scope, created at now (to the
// millisecond, as stored) and expiring ttl later (never when ttl is
// zero), with its secret, which only the caller ever sees. Engines store
// the token with HashToken(secret).
func NewScopedToken(userID, name, scope string, ttl time.Duration, now time.Time) (*Token, string, error) {
	if err := ValidTokenScope(scope); err != nil {
		return nil, "", err
	}
	if userID == "" {
		return nil, "", Errorf(EINVALID, "a token needs a user")
	}
	if err := ValidTokenName(name); err != nil {
		return nil, "", err
	}
	if err := ValidTokenTTL(ttl); err != nil {
		return nil, "", err
	}
	t := &Token{ID: NewID(), UserID: userID, Name: name, Scope: scope, CreatedAt: now.UTC().Truncate(time.Millisecond)}
	if ttl > 0 {
		at := t.CreatedAt.Add(ttl).Truncate(time.Millisecond)
		t.ExpiresAt = &at
	}
	return t, NewTokenSecret(), nil
}

// TokenNotFound reports that no live token matches.
func TokenNotFound() *Error {
	return Errorf(ENOTFOUND, "unknown, revoked or expired token")
}
