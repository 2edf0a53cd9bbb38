package chatgpttui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as conversations.json: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(real, file))
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"c/" + file}, data)
	})
}
