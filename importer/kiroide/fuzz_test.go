package kiroide

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a chat of the earlier layout and as
// a session of the later: no panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join(root, "c0ffee00c0ffee00c0ffee00c0ffee00", "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d.chat"), "w/x.chat")
}

// FuzzReadSession is FuzzRead for the later layout's documents.
func FuzzReadSession(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join(root, "workspace-sessions", "L2hvbWUvdS9zaG9w", "7d0c9a4e-2b1f-4c55-8e3a-6f1d2c9b0a11.json"), "workspace-sessions/w/x.json")
}
