package kiro

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session log. Reading must not
// panic and whatever it returns must be valid loom messages.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, filepath.Join(fixture, "cli", cliID+".jsonl"), filepath.Join(fixture, "5f2a9c", newID, "messages.jsonl"))
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzOneFile(t, Format{}, "s.jsonl", data)
	})
}
