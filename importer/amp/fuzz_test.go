package amp

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a thread file. Reading must not
// panic and whatever it returns must be valid loom messages.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, filepath.Join(fixture, threadID+".json"))
	f.Add([]byte(`{"id":"T-x","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a"}]},{"role":"user","content":[{"type":"tool_result","toolUseID":"a","run":{"status":"done","result":[1,"x"]}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := read("T-f.json", data, time.Unix(1763632800, 0))
		if err == nil {
			importertest.CheckValidOf(t, Tool, res)
		}
	})
}
