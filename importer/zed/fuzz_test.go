package zed

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a thread's JSON (both versions),
// and, when the first byte is 'c', as a saved text thread. The database
// itself is SQLite's, read by importer.OpenSQLite, and zstd is
// klauspost/compress's, bounded by maxThread. Reading must not panic and
// whatever it returns must be valid loom messages.
func FuzzRead(f *testing.F) {
	for _, v := range []obj{agentThread(5), subThread(), legacyThread()} {
		j, _ := json.Marshal(v)
		f.Add(j)
	}
	for _, name := range []string{"Retry backoff - 1.zed.json", "Crates.zed.json"} {
		data := importertest.ReadBytes(f, filepath.Join("testdata", "conversations", name))
		f.Add(append([]byte("c"), data...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 0 && data[0] == 'c' {
			path := filepath.Join(t.TempDir(), "t"+contextsSuffix)
			importertest.WriteFile(t, path, data[1:], 0o644)
			if res, err := readContext(path); err == nil {
				importertest.CheckValidOf(t, Tool, res)
			}
			return
		}
		res := &importer.Result{}
		th := &thread{ID: "t", Path: "f", Updated: time.Unix(1763632800, 0)}
		if th.decode(data, res) != nil {
			return
		}
		th.b.linkAgent("toolu_2", "sub")
		importertest.CheckValidOf(t, Tool, &importer.Result{Sessions: []*importer.Session{th.session()}})
	})
}
