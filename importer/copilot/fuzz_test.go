package copilot

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as an events file: it must not panic,
// must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "session-state", "*", "events.jsonl"))
	importertest.SeedFiles(f, files...)
	importertest.SeedStrings(f,
		"",
		"{}\n",
		`{"type":"subagent.started","data":{"toolCallId":"c"}}`+"\n"+`{"type":"user.message","data":{"content":"x","source":"agent-1"}}`,
		`{"type":"assistant.message","data":{"toolRequests":[{},{"toolCallId":"c"},{"toolCallId":"c"}]}}`+"\n"+
			`{"type":"tool.execution_complete","data":{"toolCallId":"c","success":false,"error":7}}`,
		`{"type":"session.compaction_complete","data":{"summaryContent":"s","compactionTokensUsed":{"inputTokens":1e18,"cacheReadTokens":-4}}}`,
		`{"type":"assistant.message","data":{"parentToolCallId":"c","content":{"a":1}},"id":"x"}`+"\n"+`{"type":"user.message","data":{"content":"y"},"id":"x"}`,
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := importertest.ReadTimed(t, func(ctx context.Context) (*importer.Result, error) {
			return read(ctx, "events.jsonl", bytes.NewReader(data))
		})
		if err != nil {
			return
		}
		importertest.CheckComplete(t, res)
		lines := bytes.Count(data, []byte("\n")) + 1
		total := 0
		for _, s := range res.Sessions {
			total += len(s.Messages)
		}
		if total > lines {
			t.Fatalf("%d messages from %d lines", total, lines)
		}
	})
}
