package poolside

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a trajectory: no panic, bounded
// time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join(root, "trajectory-"+id+".ndjson"), "t/trajectory-x.ndjson")
}
