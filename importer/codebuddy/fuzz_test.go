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
	importertest.FuzzFilePair(f, Format{}, [2]string{"p/s.jsonl", "p/s/subagents/a.jsonl"}, [2][]byte{data, []byte(`{"type":"function_call_result","callId":"call-1"}`)})
}
