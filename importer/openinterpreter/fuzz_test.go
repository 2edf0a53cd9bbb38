package openinterpreter

import (
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a conversation: no panic, a valid
// result. The file is read whole (at most importer.MaxDocument), so its
// reading from disk is not fuzzed.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, file)
	f.Add([]byte(`[{"role":"computer","type":"console","content":"x"},{"role":"assistant","type":"code","content":""},{"role":"assistant","type":"image","content":[1]},{"role":1}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.Check(t, parse("a__b.json", data, time.Unix(1762000000, 0)))
	})
}
