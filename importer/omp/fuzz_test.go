package omp

import (
	"os"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session file and its sub-agent's:
// no panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(mainFile)
	f.Add(data, []byte(`{"type":"session","id":"x"}`))
	f.Fuzz(func(t *testing.T, main, sub []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"p/s.jsonl", "p/s/a.jsonl"}, main, sub)
	})
}
