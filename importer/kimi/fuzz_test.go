package kimi

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session's wire log and context:
// it must not panic, must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	dir := filepath.Join(sessions, hash, sessionID)
	ctxData, _ := os.ReadFile(filepath.Join(dir, contextFile))
	wire, _ := os.ReadFile(filepath.Join(dir, wireFile))
	f.Add(wire, ctxData)
	f.Add([]byte(`{"timestamp":1e300,"message":{"type":"StatusUpdate","payload":{"token_usage":{"output":-5}}}}`),
		[]byte(`{"role":"assistant","tool_calls":[{},{"id":"a"}]}`+"\n"+`{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":1}]}`))
	f.Fuzz(func(t *testing.T, wire, ctxData []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s := &reading{res: &importer.Result{}, name: "context.jsonl", id: "s", modified: time.Unix(1763000000, 0)}
		if err := s.wire(ctx, "wire.jsonl", bytes.NewReader(wire)); err != nil {
			t.Fatal(err)
		}
		if err := s.context(ctx, bytes.NewReader(ctxData)); err != nil {
			t.Fatal(err)
		}
		importertest.CheckValidOf(t, Tool, s.result())
	})
}
