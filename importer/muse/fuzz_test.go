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
	importertest.FuzzFilePair(f, Format{}, [2]string{"s/" + logName, "s/subagent/a/" + logName}, [2][]byte{data, data})
}
