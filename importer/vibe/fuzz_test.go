package vibe

import (
	"os"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session's messages and metadata:
// no panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	m, _ := os.ReadFile(messages)
	meta, _ := os.ReadFile(dir + "/" + metaFile)
	importertest.FuzzFilePair(f, Format{}, [2]string{"s/" + messagesFile, "s/" + metaFile}, [2][]byte{m, meta})
}
