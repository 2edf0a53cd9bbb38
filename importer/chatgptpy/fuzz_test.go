package chatgptpy

import (
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a saved session: no panic, a valid
// result. The file is read whole (at most importer.MaxDocument), so its
// reading from disk is not fuzzed.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, first)
	f.Add([]byte(`{"model":"","messages":[{"role":"assistant","content":[{"type":"text"}]},{"role":"tool"},7]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.Check(t, parse("chatgpt-session-1.json", data, time.Unix(1762000000, 0)))
	})
}
