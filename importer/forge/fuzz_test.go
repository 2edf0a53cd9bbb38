package forge

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a conversation's context: no panic,
// and whatever it returns is valid loom messages.
func FuzzRead(f *testing.F) {
	data := importertest.ReadBytes(f, filepath.Join("testdata", "contexts.json"))
	var convs map[string]struct {
		Context json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(data, &convs); err != nil {
		f.Fatal(err)
	}
	for _, c := range convs {
		f.Add([]byte(c.Context))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res := &importer.Result{}
		if s := read(res, "db", "c", data, time.Unix(1762000000, 0).UTC(), map[string]string{}); s != nil {
			res.Sessions = []*importer.Session{s}
		}
		importertest.CheckValidOf(t, Tool, res)
	})
}
