package copilotvs

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a trace file: no panic, bounded
// time, a valid result.
func FuzzRead(f *testing.F) {
	importertest.FuzzFile(f, Format{}, filepath.Join(traces, "20260304_101530_VSGitHubCopilot_traces_2.jsonl"), "t/x_VSGitHubCopilot_traces.jsonl")
}
