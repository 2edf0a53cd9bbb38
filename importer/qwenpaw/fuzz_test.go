package qwenpaw

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session document: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(workspaces, "default", "sessions", "console", "default.json"))
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"w/sessions/console/s.json"}, data)
	})
}
