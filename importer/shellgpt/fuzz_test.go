package shellgpt

import (
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a chat: no panic, a valid result.
// The file is read whole (at most importer.MaxDocument), so its reading
// from disk is not fuzzed.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, file)
	f.Add([]byte(`[{"role":"assistant","content":null,"tool_calls":[{"id":"c","function":{"name":"","arguments":"{"}}]},{"role":"tool","tool_call_id":"c","content":[1]},{"role":7}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.Check(t, parse("notes", data, time.Unix(1762000000, 0)))
	})
}
