package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// RunTokens checks an engine's loom.TokenStore: secrets are shown once
// and stored hashed, each token authenticates as its user until revoked,
// and last_used_at is kept without a write per request.
func RunTokens(t *testing.T, open func(t *testing.T) loom.TokenStore) {
	c := context.Background()
	ts := open(t)

	alice, secret, err := ts.CreateToken(c, "alice", "laptop")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !strings.HasPrefix(secret, loom.TokenPrefix) || len(secret) < 40 {
		t.Fatalf("secret %q: want %s and at least 256 bits", secret, loom.TokenPrefix)
	}
	if alice.ID == "" || alice.UserID != "alice" || alice.Name != "laptop" || alice.CreatedAt.IsZero() {
		t.Fatalf("created token = %+v", alice)
	}
	bob, bobSecret, err := ts.CreateToken(c, "bob", "")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if bobSecret == secret || bob.ID == alice.ID {
		t.Fatal("two tokens share a secret or an id")
	}

	// A second handle sees the tokens the first made.
	other := open(t)
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
	time.Sleep(5 * time.Millisecond)
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

	for _, tc := range []struct{ user, name string }{{"", "x"}, {"carol", "two\nlines"}, {"carol", strings.Repeat("n", 101)}} {
		if _, _, err := ts.CreateToken(c, tc.user, tc.name); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("create(%q, %q): %v, want invalid", tc.user, tc.name, err)
		}
	}
}
