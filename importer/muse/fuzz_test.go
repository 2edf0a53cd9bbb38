package muse

import (
	"os"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session's and a sub-agent's logs:
// no panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(file)
	f.Add(data, data)
	f.Fuzz(func(t *testing.T, main, sub []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"s/" + logName, "s/subagent/a/" + logName}, main, sub)
	})
}
