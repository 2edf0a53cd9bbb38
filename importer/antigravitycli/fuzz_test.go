package antigravitycli

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a transcript: no panic, bounded
// time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join(logsA, fullName), filepath.Join("c", ".system_generated", "logs", fullName))
}
