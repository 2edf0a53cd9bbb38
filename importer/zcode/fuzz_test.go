package zcode

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as ZCode's database: no panic, bounded
// time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join("testdata", dbName), "z/"+dbName)
}
