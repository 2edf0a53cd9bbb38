package qwenpaw

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session document: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join(workspaces, "default", "sessions", "console", "default.json"), "w/sessions/console/s.json")
}
