package loom

import (
	"testing"
	"unicode/utf8"
)

// TruncateBytes never returns more than n bytes nor cuts a character in
// two, and marks a cut.
func TestTruncateBytes(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghij", 6, "abc…"},
		{"ééééé", 6, "é…"}, // 2-byte runes: "é" + "…" is 5 bytes
		{"abcdef", 3, ""},
		{"abcdef", 0, ""},
	} {
		got := TruncateBytes(c.s, c.n)
		if got != c.want || len(got) > max(c.n, len(c.s)) || !utf8.ValidString(got) {
			t.Errorf("TruncateBytes(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
