package deepseektui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session document: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(sessions, "0f6c2b1e-7a44-4e0b-9a51-3d2e8c7b1f90.json"))
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"s/x.json"}, data)
	})
}
