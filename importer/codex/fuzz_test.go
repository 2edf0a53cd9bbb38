package codex

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a rollout: it must not panic, must
// end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	for _, path := range []string{sample, "testdata/newer.jsonl", "testdata/fork.jsonl", "testdata/subagent.jsonl", "testdata/legacy.jsonl", parentRollout, childRollout} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"{}\n",
		`{"type":"session_meta","payload":{"id":"a","forked_from_id":"b"}}` + "\n" + `{"type":"session_meta","payload":{"id":"b"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"","output":[{"type":"input_image"}]}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-5}}}}`,
		`{"type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":"x"}]}}`,
		`{"id":"x"}` + "\n" + `{"type":"message","role":"user","content":[{"type":"input_text","text":"# Context from my IDE setup:\n## My request for Codex:\nhi"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		res, err := read(ctx, "fuzz.jsonl", bytes.NewReader(data))
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("read took %v", d)
		}
		if err != nil {
			return
		}
		if len(res.Sessions) > 1 {
			t.Fatalf("%d sessions from one file", len(res.Sessions))
		}
		importertest.CheckValid(t, res)
	})
}
