package chat

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The input history keeps messages of several lines whole, reads the
// plain lines of older files, and keeps the newest historyLimit.
func TestChatHistoryRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "history")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte("an older line\n"), 0o600)
	h := append(readHistory(path), "first line\nsecond line", `"quoted"`, "plain")
	writeHistory(path, h)
	if got := readHistory(path); !slices.Equal(got, h) {
		t.Fatalf("read back %q, want %q", got, h)
	}
	many := make([]string, historyLimit+5)
	for i := range many {
		many[i] = string(rune('a' + i%26))
	}
	writeHistory(path, many)
	if got := readHistory(path); len(got) != historyLimit || got[0] != many[5] {
		t.Fatalf("kept %d entries starting %q", len(got), got[0])
	}
}
