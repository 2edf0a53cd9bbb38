package minisweagent

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
	f.Add([]byte(`{"messages":[{"role":"tool","tool_call_id":"x","content":[{"type":"text","text":1}]},{"role":"assistant","content":null,"tool_calls":[{}],"extra":{"timestamp":-1e308,"response":{"usage":{"prompt_tokens":-1}}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.Check(t, parse("s.traj.json", data, time.Unix(1762000000, 0)))
	})
}
