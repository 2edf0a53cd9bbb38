package conformance

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// RunShares checks an engine's loom.ShareStore: a share's ciphertext is
// served while it is live, to anyone who has its id; revoking it (by its
// user only) or its expiry makes it not found, and the ciphertext is
// deleted from the store, which the list shows by a size of 0. open
// returns a handle on one shared store whose clock is now.
func RunShares(t *testing.T, open func(t *testing.T, now func() time.Time) loom.ShareStore) {
	c := context.Background()
	clock := NewClock()
	ss := open(t, clock.Now)
	other := open(t, clock.Now)
	blob := bytes.Repeat([]byte{0xA5, 0x00, 0x5A}, 1000)

	sh, err := ss.CreateShare(c, "alice", blob, clock.Now().Add(7*24*time.Hour))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !loom.ValidShareID(sh.ID) || sh.UserID != "alice" || sh.Size != int64(len(blob)) || !sh.CreatedAt.Equal(clock.Now()) {
		t.Fatalf("created share = %+v", sh)
	}
	got, err := other.ShareBlob(c, sh.ID)
	if err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("blob from another handle: %d bytes, %v; want the %d uploaded", len(got), err, len(blob))
	}
	for _, id := range []string{"", "nope", loom.NewShareID(), sh.ID + "x"} {
		if _, err := ss.ShareBlob(c, id); loom.ErrorCode(err) != loom.ENOTFOUND {
			t.Errorf("blob of %q: %v, want not found", id, err)
		}
	}

	for _, tc := range []struct {
		name    string
		user    string
		blob    []byte
		expires time.Time
	}{
		{"no user", "", blob, clock.Now().Add(time.Hour)},
		{"empty", "alice", nil, clock.Now().Add(time.Hour)},
		{"expired already", "alice", blob, clock.Now().Add(-time.Second)},
		{"expires now", "alice", blob, clock.Now()},
		{"too large", "alice", make([]byte, loom.MaxShareBytes+1), clock.Now().Add(time.Hour)},
	} {
		if _, err := ss.CreateShare(c, tc.user, tc.blob, tc.expires); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("create %s: %v, want invalid", tc.name, err)
		}
	}

	// Revoking: only its user may; then it is gone for everyone.
	if err := other.RevokeShare(c, "bob", sh.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("bob revokes alice's share: %v, want not found", err)
	}
	if _, err := ss.ShareBlob(c, sh.ID); err != nil {
		t.Fatalf("alice's share stopped answering when bob tried to revoke it: %v", err)
	}
	if err := other.RevokeShare(c, "alice", sh.ID); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if _, err := ss.ShareBlob(c, sh.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("blob of a revoked share: %v, want not found", err)
	}
	list, err := ss.Shares(c, "alice")
	if err != nil || len(list) != 1 {
		t.Fatalf("alice's shares: %v, %v", list, err)
	}
	if list[0].RevokedAt == nil || list[0].Size != 0 || list[0].State(clock.Now()) != "revoked" {
		t.Errorf("revoked share listed as %+v: want revoked, ciphertext deleted (size 0)", list[0])
	}
	first := *list[0].RevokedAt
	clock.Advance(time.Second)
	if err := ss.RevokeShare(c, "alice", sh.ID); err != nil {
		t.Errorf("revoke twice: %v", err)
	}
	if list, _ = ss.Shares(c, "alice"); !list[0].RevokedAt.Equal(first) {
		t.Errorf("revoking again moved revoked_at from %v to %v", first, list[0].RevokedAt)
	}
	if err := ss.RevokeShare(c, "alice", loom.NewShareID()); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Errorf("revoke unknown: %v, want not found", err)
	}

	t.Run("Expiry", func(t *testing.T) { shareExpiry(t, ss, other, clock, blob) })
}

// shareExpiry: a share answers until the millisecond it expires and then
// is not found on every handle; the next share made deletes its
// ciphertext. The lists are per user, newest first.
func shareExpiry(t *testing.T, ss, other loom.ShareStore, clock *Clock, blob []byte) {
	c := context.Background()
	short, err := ss.CreateShare(c, "carol", blob, clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Millisecond)
	long, err := ss.CreateShare(c, "carol", blob, clock.Now().Add(30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour - 2*time.Millisecond)
	if _, err := other.ShareBlob(c, short.ID); err != nil {
		t.Fatalf("a share refused before it expires: %v", err)
	}
	clock.Advance(time.Millisecond)
	for _, h := range []loom.ShareStore{ss, other} {
		if _, err := h.ShareBlob(c, short.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
			t.Errorf("an expired share answers: %v", err)
		}
	}
	if _, err := other.ShareBlob(c, long.ID); err != nil {
		t.Errorf("a live share stopped answering when another expired: %v", err)
	}
	// Another share, of anyone, deletes the expired ciphertext.
	if _, err := other.CreateShare(c, "dan", blob, clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	list, err := ss.Shares(c, "carol")
	if err != nil || len(list) != 2 {
		t.Fatalf("carol's shares: %v, %v", list, err)
	}
	if list[0].ID != long.ID || list[1].ID != short.ID {
		t.Errorf("carol's shares not newest first: %s, %s", list[0].ID, list[1].ID)
	}
	if s := list[1]; s.Size != 0 || s.State(clock.Now()) != "expired" || s.RevokedAt != nil {
		t.Errorf("expired share listed as %+v (%s): want expired, ciphertext deleted", s, s.State(clock.Now()))
	}
	if s := list[0]; s.Size != int64(len(blob)) || s.State(clock.Now()) != "live" {
		t.Errorf("live share listed as %+v", s)
	}
	if list, _ := ss.Shares(c, "nobody"); len(list) != 0 {
		t.Errorf("a user without shares lists %d", len(list))
	}
	// An expired share can still be revoked, and stays gone.
	if err := ss.RevokeShare(c, "carol", short.ID); err != nil {
		t.Errorf("revoke an expired share: %v", err)
	}
}
