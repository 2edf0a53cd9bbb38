package trae

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a state database: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join(root, "workspaceStorage", "4f1a9c2e7b3d5e6f8a0b1c2d3e4f5a6b", stateDB), "w/"+stateDB)
}
