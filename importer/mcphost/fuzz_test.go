package mcphost

import (
	"os"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session's document: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(file)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"s/session.json"}, data)
	})
}
