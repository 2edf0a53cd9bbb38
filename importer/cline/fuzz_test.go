package cline

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

type fileInfo struct{ os.FileInfo }

func (fileInfo) ModTime() time.Time { return time.Unix(1762000000, 0) }

// FuzzRead reads arbitrary bytes as a Cline messages file, with a real
// record and compaction beside it. Reading must not panic, and whatever it returns must
// be valid loom messages. Both files are read whole (at most
// importer.MaxDocument), so their reading from disk is not fuzzed.
func FuzzRead(f *testing.F) {
	read := func(id, suffix string) []byte {
		data := importertest.ReadBytes(f, filepath.Join(fixture, id, id+suffix))
		return data
	}
	rec, compaction := read(compactID, ".json"), read(compactID, compactionSuffix)
	for _, id := range []string{turnsID, readID, compactID, spawnID} {
		f.Add(read(id, messagesSuffix))
	}
	f.Add([]byte(`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"n","input":[1]}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","is_error":true,"content":[{"type":"text","text":1}]}],"ts":-1e300}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := parse("s"+messagesSuffix, data, rec, compaction, fileInfo{})
		if err != nil {
			t.Fatal(err)
		}
		importertest.CheckValidOf(t, Tool, res)
	})
}
