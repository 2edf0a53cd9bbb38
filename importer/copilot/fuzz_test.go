package copilot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as an events file: it must not panic,
// must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "session-state", "*", "events.jsonl"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"{}\n",
		`{"type":"subagent.started","data":{"toolCallId":"c"}}` + "\n" + `{"type":"user.message","data":{"content":"x","source":"agent-1"}}`,
		`{"type":"assistant.message","data":{"toolRequests":[{},{"toolCallId":"c"},{"toolCallId":"c"}]}}` + "\n" +
			`{"type":"tool.execution_complete","data":{"toolCallId":"c","success":false,"error":7}}`,
		`{"type":"session.compaction_complete","data":{"summaryContent":"s","compactionTokensUsed":{"inputTokens":1e18,"cacheReadTokens":-4}}}`,
		`{"type":"assistant.message","data":{"parentToolCallId":"c","content":{"a":1}},"id":"x"}` + "\n" + `{"type":"user.message","data":{"content":"y"},"id":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		res, err := read(ctx, "events.jsonl", bytes.NewReader(data))
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("read took %v", d)
		}
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
