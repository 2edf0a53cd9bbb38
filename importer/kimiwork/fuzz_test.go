package kimiwork

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as an agent's wire log: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join(sessions, "wd_site_0123456789ab", "conv-7f3a9c21", "agents", "main", "wire.jsonl"), "w/conv-1/agents/main/wire.jsonl")
}
