package codebuff

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a chat: no panic, bounded time, a
// valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join(projects, "site", "chats", "2026-03-04T10-15-30.123Z", "chat-messages.json"), "p/chats/c/chat-messages.json")
}
