package traeagent

import (
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a trajectory: no panic, a valid
// result. The file is read whole (at most importer.MaxDocument), so its
// reading from disk is not fuzzed.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, file)
	f.Add([]byte(`{"task":"","llm_interactions":[{"timestamp":"x","input_messages":[{"role":"user","tool_result":{"call_id":"c","success":false}}],"response":{"tool_calls":[{"call_id":"c","name":""}],"usage":{"input_tokens":-1e308}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.Check(t, parse("trajectory_1.json", data, time.Unix(1762000000, 0)))
	})
}
