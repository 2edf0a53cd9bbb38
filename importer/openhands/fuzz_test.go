package openhands

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a conversation's state and as two
// of its events. Reading must not panic, and whatever it returns must
// be valid loom messages. Each file is read whole (at most
// importer.MaxDocument), so their reading from disk is not fuzzed.
func FuzzRead(f *testing.F) {
	dir := filepath.Join(conversations, convDir)
	state, _ := os.ReadFile(filepath.Join(dir, stateFile))
	events, _ := filepath.Glob(filepath.Join(dir, eventsDir, "*.json"))
	for i := 0; i+1 < len(events); i += 2 {
		a, _ := os.ReadFile(events[i])
		b, _ := os.ReadFile(events[i+1])
		f.Add(state, a, b)
	}
	f.Add([]byte(`{"stats":{"usage_to_metrics":{"a":{"token_usages":[{"response_id":"r","prompt_tokens":-1}]}}}}`),
		[]byte(`{"kind":"ActionEvent","id":"x","tool_call_id":"c","llm_response_id":"r","action":[1]}`),
		[]byte(`{"kind":"ObservationEvent","id":"x","tool_call_id":"c","observation":{"content":7}}`))
	f.Fuzz(func(t *testing.T, state, a, b []byte) {
		c := conversation{dir: "c", state: state, statePath: stateFile, events: []file{{path: "a.json", data: a}, {path: "b.json", data: b}}}
		importertest.CheckValidOf(t, Tool, c.parse())
	})
}
