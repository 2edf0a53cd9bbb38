package opencodex

import (
	"os"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a saved document beside a real one:
// no panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(file)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"s/rollout-a.json", "s/rollout-b.json"}, data, data)
	})
}
