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
	importertest.FuzzFilePair(f, Format{}, [2]string{"p/s.jsonl", "p/s/a.jsonl"}, [2][]byte{data, []byte(`{"type":"session","id":"x"}`)})
}
