package copilot

import (
	"context"
	"io"
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
	importertest.FuzzStream(f, func(ctx context.Context, r io.Reader) (*importer.Result, error) {
		return read(ctx, "events.jsonl", r)
	}, func(t *testing.T, data []byte, res *importer.Result) {
		importertest.CheckComplete(t, res)
		importertest.CheckMessagesPerLine(t, res, data, func(lines int) int { return lines })
	})
}
