package loom_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// A share id is typed after loom share revoke: none may begin with '-',
// where the command line would read it as a flag (one in 64 did when ids
// were 16 random bytes in base64url).
func TestNewShareIDNeverBeginsWithADash(t *testing.T) {
	const n = 4096 // a '-' first in one of 64 would show 64 times
	seen := make(map[string]bool, n)
	firsts := make(map[byte]bool)
	for range n {
		id := loom.NewShareID()
		if strings.HasPrefix(id, "-") {
			t.Fatalf("share id %q begins with '-': loom share revoke %s reads it as a flag", id, id)
		}
		if !loom.ValidShareID(id) {
			t.Fatalf("share id %q is not valid", id)
		}
		if seen[id] {
			t.Fatalf("share id %q drawn twice", id)
		}
		seen[id] = true
		firsts[id[0]] = true
	}
	// The first character still ranges over the other 63 of base64url
	// (all 63 show up in 4,096 draws but for a chance of about 1e-26).
	if len(firsts) != 63 {
		t.Errorf("the first character took %d values in %d ids, want 63", len(firsts), n)
	}
}

// Links made before keep working: an id of 16 bytes in base64url,
// including one that begins with '-', is still a valid share id.
func TestValidShareIDKeepsOlderIDs(t *testing.T) {
	old := make([]byte, 16)
	old[0] = 0xf8 // 111110…: base64url's '-'
	id := base64.RawURLEncoding.EncodeToString(old)
	if !strings.HasPrefix(id, "-") || !loom.ValidShareID(id) {
		t.Errorf("ValidShareID(%q) = false, want an older id to stay valid", id)
	}
	for _, bad := range []string{"", "short", id + "A", strings.Repeat("*", 22)} {
		if loom.ValidShareID(bad) {
			t.Errorf("ValidShareID(%q) = true", bad)
		}
	}
}
