package cortex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a conversation and its history
// file: no panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	doc, _ := os.ReadFile(filepath.Join(conversations, "4b7c9d1e-2f3a-4b5c-8d6e-7f8091a2b3c4.json"))
	meta, _ := os.ReadFile(split)
	hist, _ := os.ReadFile(split[:len(split)-len(".json")] + historySuffix)
	importertest.FuzzFilePair(f, Format{}, [2]string{"c/x.json", "c/x" + historySuffix}, [2][]byte{doc, {}}, [2][]byte{meta, hist})
}
