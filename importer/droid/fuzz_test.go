package droid

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a droid session file. Reading must
// not panic, and whatever it returns must be valid loom messages.
func FuzzRead(f *testing.F) {
	work, compact := filepath.Join(fixture, "-tmp-npmb-dwork"), filepath.Join(fixture, "-tmp-npmb-dcompact")
	importertest.SeedFiles(f, filepath.Join(work, plainID+".jsonl"), filepath.Join(work, readID+".jsonl"), filepath.Join(work, emptyID+".jsonl"), filepath.Join(compact, compactID+".jsonl"))
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
