package copilotvs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a trace file: no panic, bounded
// time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(traces, "20260304_101530_VSGitHubCopilot_traces_2.jsonl"))
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"t/x_VSGitHubCopilot_traces.jsonl"}, data)
	})
}
