package kimiwork

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as an agent's wire log: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(sessions, "wd_site_0123456789ab", "conv-7f3a9c21", "agents", "main", "wire.jsonl"))
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"w/conv-1/agents/main/wire.jsonl"}, data)
	})
}
