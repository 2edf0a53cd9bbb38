package codebuff

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a chat: no panic, bounded time, a
// valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(projects, "site", "chats", "2026-03-04T10-15-30.123Z", "chat-messages.json"))
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"p/chats/c/chat-messages.json"}, data)
	})
}
