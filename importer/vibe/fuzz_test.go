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
	f.Add(m, meta)
	f.Fuzz(func(t *testing.T, m, meta []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"s/" + messagesFile, "s/" + metaFile}, m, meta)
	})
}
