package erosolar

import (
	"os"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a saved session's document: no
// panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(file)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"s/" + id + ".json"}, data)
	})
}
