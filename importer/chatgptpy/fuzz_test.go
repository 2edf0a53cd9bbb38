package chatgptpy

import (
	"os"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a saved session: no panic, a valid
// result. The file is read whole (at most importer.MaxDocument), so its
// reading from disk is not fuzzed.
func FuzzRead(f *testing.F) {
	data, err := os.ReadFile(first)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"model":"","messages":[{"role":"assistant","content":[{"type":"text"}]},{"role":"tool"},7]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.Check(t, parse("chatgpt-session-1.json", data, time.Unix(1762000000, 0)))
	})
}
