package droid

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a droid session file. Reading must
// not panic, and whatever it returns must be valid loom messages.
func FuzzRead(f *testing.F) {
	for _, path := range []string{"-tmp-npmb-dwork/" + plainID, "-tmp-npmb-dwork/" + readID, "-tmp-npmb-dwork/" + emptyID, "-tmp-npmb-dcompact/" + compactID} {
		data, err := os.ReadFile(filepath.Join(fixture, filepath.FromSlash(path)+".jsonl"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"type":"session_start","id":"s"}
{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"n","input":[}]}}
{"type":"message","id":"a","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","is_error":true,"content":[{"type":"text","text":1}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := read(context.Background(), "s.jsonl", bytes.NewReader(data), time.Unix(1762000000, 0))
		if err != nil {
			return
		}
		importertest.CheckValidOf(t, Tool, res)
	})
}
