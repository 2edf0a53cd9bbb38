package icodemate

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as IcodeMate's database: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{fork}, filepath.Join("testdata", "icodemate.db"), "i/icodemate.db")
}
