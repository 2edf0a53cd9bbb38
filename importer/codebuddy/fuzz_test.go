package codebuddy

import (
	"os"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a transcript and a sub-agent's: no
// panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(file)
	f.Add(data, []byte(`{"type":"function_call_result","callId":"call-1"}`))
	f.Fuzz(func(t *testing.T, main, sub []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"p/s.jsonl", "p/s/subagents/a.jsonl"}, main, sub)
	})
}
