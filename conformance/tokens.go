package conformance

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Clock is a settable clock for the stores of a test: every handle opened
// for it reads the same time.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at a fixed time with milliseconds, as stores
// keep them.
func NewClock() *Clock {
	return &Clock{now: time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (k *Clock) Now() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.now
}

// Advance moves the clock on by d.
func (k *Clock) Advance(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.now = k.now.Add(d)
}

// RunTokens checks an engine's loom.TokenStore: secrets are shown once
// and stored hashed, each token authenticates as its user until revoked
// or expired, and last_used_at is kept without a write per request. open
// returns a handle on one shared store whose clock is now.
func RunTokens(t *testing.T, open func(t *testing.T, now func() time.Time) loom.TokenStore) {
	c := context.Background()
	clock := NewClock()
	ts := open(t, clock.Now)

	alice, secret, err := ts.CreateToken(c, "alice", "laptop", 0)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !strings.HasPrefix(secret, loom.TokenPrefix) || len(secret) < 40 {
		t.Fatalf("secret %q: want %s and at least 256 bits", secret, loom.TokenPrefix)
	}
	if alice.ID == "" || alice.UserID != "alice" || alice.Name != "laptop" || alice.CreatedAt.IsZero() {
		t.Fatalf("created token = %+v", alice)
	}
	if alice.ExpiresAt != nil {
		t.Errorf("a token made without a lifetime expires at %v", alice.ExpiresAt)
	}
	bob, bobSecret, err := ts.CreateToken(c, "bob", "", 0)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if bobSecret == secret || bob.ID == alice.ID {
		t.Fatal("two tokens share a secret or an id")
	}

	// A second handle sees the tokens the first made.
	other := open(t, clock.Now)
	got, err := other.Authenticate(c, secret)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	if got.ID != alice.ID || got.UserID != "alice" {
		t.Fatalf("authenticated as %+v, want alice's token", got)
	}
	if got.LastUsedAt == nil {
		t.Fatal("last_used_at not set by authentication")
	}
	for _, bad := range []string{"", "loom_nope", secret + "x", strings.TrimPrefix(secret, loom.TokenPrefix), loom.HashToken(secret)} {
		if _, err := ts.Authenticate(c, bad); loom.ErrorCode(err) != loom.ENOTFOUND {
			t.Errorf("authenticate %q: err = %v, want not found", bad, err)
		}
	}

	listAndRevokeTokens(t, c, ts, other, clock, alice, bob, secret, bobSecret)

	for _, tc := range []struct {
		user, name string
		ttl        time.Duration
	}{{"", "x", 0}, {"carol", "two\nlines", 0}, {"carol", strings.Repeat("n", 101), 0}, {"carol", "x", -time.Second}} {
		if _, _, err := ts.CreateToken(c, tc.user, tc.name, tc.ttl); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("create(%q, %q, %v): %v, want invalid", tc.user, tc.name, tc.ttl, err)
		}
	}

	t.Run("Scope", func(t *testing.T) { tokenScope(t, ts, other) })
	t.Run("LastUsed", func(t *testing.T) { tokenLastUsed(t, ts, other, clock) })
	t.Run("Expiry", func(t *testing.T) { tokenExpiry(t, ts, other, clock) })
}

// listAndRevokeTokens: tokens are listed oldest first, by user; a revoked
// token stops authenticating, once and for good, and only itself.
func listAndRevokeTokens(t *testing.T, c context.Context, ts, other loom.TokenStore, clock *Clock, alice, bob *loom.Token, secret, bobSecret string) {
	list, err := ts.Tokens(c, "")
	if err != nil || len(list) != 2 {
		t.Fatalf("tokens: %d, %v; want 2", len(list), err)
	}
	if list[0].ID != alice.ID || list[1].ID != bob.ID {
		t.Errorf("tokens not oldest first: %s, %s", list[0].ID, list[1].ID)
	}
	list, err = ts.Tokens(c, "bob")
	if err != nil || len(list) != 1 || list[0].ID != bob.ID {
		t.Fatalf("bob's tokens: %v, %v", list, err)
	}

	if err := ts.RevokeToken(c, alice.ID); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if _, err := other.Authenticate(c, secret); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("revoked token authenticates: %v", err)
	}
	list, _ = ts.Tokens(c, "alice")
	if len(list) != 1 || list[0].RevokedAt == nil {
		t.Fatalf("revoked token listed as %+v", list)
	}
	first := *list[0].RevokedAt
	clock.Advance(time.Second)
	if err := ts.RevokeToken(c, alice.ID); err != nil {
		t.Fatalf("revoke twice: %v", err)
	}
	list, _ = ts.Tokens(c, "alice")
	if !list[0].RevokedAt.Equal(first) {
		t.Errorf("revoking again moved revoked_at from %v to %v", first, list[0].RevokedAt)
	}
	if err := ts.RevokeToken(c, "no-such-token"); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Errorf("revoke unknown: %v, want not found", err)
	}
	if _, err := ts.Authenticate(c, bobSecret); err != nil {
		t.Errorf("bob's token stopped working when alice's was revoked: %v", err)
	}
}

// tokenLastUsed: authenticating notes the time in last_used_at, which
// Tokens lists, but writes it again only once it is TokenUseInterval
// old.
func tokenLastUsed(t *testing.T, ts, other loom.TokenStore, clock *Clock) {
	c := context.Background()
	tok, secret, err := ts.CreateToken(c, "dave", "used", 0)
	if err != nil {
		t.Fatal(err)
	}
	if tok.LastUsedAt != nil {
		t.Fatalf("a new token was last used at %v", tok.LastUsedAt)
	}
	lastUsed := func() *time.Time {
		t.Helper()
		list, err := ts.Tokens(c, "dave")
		if err != nil || len(list) != 1 {
			t.Fatalf("dave's tokens: %v, %v", list, err)
		}
		return list[0].LastUsedAt
	}
	if got := lastUsed(); got != nil {
		t.Fatalf("listed as last used at %v before any use", got)
	}
	clock.Advance(time.Second)
	first := clock.Now()
	if _, err := other.Authenticate(c, secret); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); got == nil || !got.Equal(first) {
		t.Fatalf("last_used_at = %v after a use at %v", got, first)
	}
	// Within the interval: no write.
	clock.Advance(loom.TokenUseInterval / 2)
	got, err := other.Authenticate(c, secret)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastUsedAt == nil || !got.LastUsedAt.Equal(first) {
		t.Errorf("authenticate within the interval returns last_used_at %v, want %v", got.LastUsedAt, first)
	}
	if got := lastUsed(); got == nil || !got.Equal(first) {
		t.Errorf("last_used_at written again within %v: %v, want %v", loom.TokenUseInterval, got, first)
	}
	// Past it: written again.
	clock.Advance(loom.TokenUseInterval)
	second := clock.Now()
	if _, err := ts.Authenticate(c, secret); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); got == nil || !got.Equal(second) {
		t.Errorf("last_used_at = %v after a use at %v, a whole interval later", got, second)
	}
}

// tokenExpiry: a token made with a lifetime lists when it expires and
// authenticates until then, and from then on is refused like an unknown
// one, on every handle; tokens without a lifetime go on.
func tokenExpiry(t *testing.T, ts, other loom.TokenStore, clock *Clock) {
	c := context.Background()
	made := clock.Now()
	tok, secret, err := ts.CreateToken(c, "erin", "short", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, forever, err := ts.CreateToken(c, "erin", "long", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := made.Add(time.Hour)
	if tok.ExpiresAt == nil || !tok.ExpiresAt.Equal(want) {
		t.Fatalf("created token expires at %v, want %v", tok.ExpiresAt, want)
	}
	list, err := ts.Tokens(c, "erin")
	if err != nil || len(list) != 2 {
		t.Fatalf("erin's tokens: %v, %v", list, err)
	}
	if list[0].ExpiresAt == nil || !list[0].ExpiresAt.Equal(want) || list[1].ExpiresAt != nil {
		t.Errorf("listed expiries: %v and %v, want %v and none", list[0].ExpiresAt, list[1].ExpiresAt, want)
	}
	clock.Advance(time.Hour - time.Millisecond)
	if _, err := other.Authenticate(c, secret); err != nil {
		t.Errorf("a token refused before it expires: %v", err)
	}
	clock.Advance(time.Millisecond)
	for _, h := range []loom.TokenStore{ts, other} {
		if _, err := h.Authenticate(c, secret); loom.ErrorCode(err) != loom.ENOTFOUND {
			t.Errorf("an expired token authenticates: %v", err)
		}
	}
	clock.Advance(365 * 24 * time.Hour)
	if _, err := other.Authenticate(c, forever); err != nil {
		t.Errorf("a token without a lifetime expired: %v", err)
	}
	// An expired token is still listed, and can still be revoked.
	if err := ts.RevokeToken(c, tok.ID); err != nil {
		t.Errorf("revoke an expired token: %v", err)
	}
}

// tokenScope: a token is full unless made share-only, and its scope
// comes back from Authenticate and Tokens on every handle; an unknown
// scope is refused.
func tokenScope(t *testing.T, ts, other loom.TokenStore) {
	c := context.Background()
	full, fullSecret, err := ts.CreateToken(c, "fay", "full", 0)
	if err != nil {
		t.Fatal(err)
	}
	shr, shareSecret, err := ts.CreateScopedToken(c, "fay", "share", loom.ScopeShare, 0)
	if err != nil {
		t.Fatal(err)
	}
	if full.Scope != loom.ScopeFull || shr.Scope != loom.ScopeShare {
		t.Fatalf("created scopes %q and %q, want %q and %q", full.Scope, shr.Scope, loom.ScopeFull, loom.ScopeShare)
	}
	for secret, want := range map[string]string{fullSecret: loom.ScopeFull, shareSecret: loom.ScopeShare} {
		got, err := other.Authenticate(c, secret)
		if err != nil || got.Scope != want {
			t.Errorf("authenticated scope %v (%v), want %q", got, err, want)
		}
	}
	list, err := ts.Tokens(c, "fay")
	if err != nil || len(list) != 2 || list[0].Scope != loom.ScopeFull || list[1].Scope != loom.ScopeShare {
		t.Errorf("fay's tokens: %+v, %v", list, err)
	}
	for _, bad := range []string{"", "admin", "Share"} {
		if _, _, err := ts.CreateScopedToken(c, "fay", "x", bad, 0); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("create with scope %q: %v, want invalid", bad, err)
		}
	}
}
