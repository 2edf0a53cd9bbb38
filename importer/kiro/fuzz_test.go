package kiro

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session log. Reading must not
// panic and whatever it returns must be valid loom messages.
func FuzzRead(f *testing.F) {
	for _, p := range []string{filepath.Join("cli", cliID+".jsonl"), filepath.Join("5f2a9c", newID, "messages.jsonl")} {
		data, err := os.ReadFile(filepath.Join(fixture, p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{path}})
		if err == nil {
			importertest.CheckValidOf(t, Tool, res)
		}
	})
}
