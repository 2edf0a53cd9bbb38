package deepseektui

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session document: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join(sessions, "0f6c2b1e-7a44-4e0b-9a51-3d2e8c7b1f90.json"), "s/x.json")
}
