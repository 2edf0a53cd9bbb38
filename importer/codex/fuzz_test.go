package codex

import (
	"context"
	"io"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a rollout: it must not panic, must
// end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, sample, "testdata/newer.jsonl", "testdata/fork.jsonl", "testdata/subagent.jsonl", "testdata/legacy.jsonl", parentRollout, childRollout)
	importertest.SeedStrings(f,
		"",
		"{}\n",
		`{"type":"session_meta","payload":{"id":"a","forked_from_id":"b"}}`+"\n"+`{"type":"session_meta","payload":{"id":"b"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"","output":[{"type":"input_image"}]}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-5}}}}`,
		`{"type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":"x"}]}}`,
		`{"id":"x"}`+"\n"+`{"type":"message","role":"user","content":[{"type":"input_text","text":"# Context from my IDE setup:\n## My request for Codex:\nhi"}]}`,
	)
	importertest.FuzzStream(f, func(ctx context.Context, r io.Reader) (*importer.Result, error) {
		return read(ctx, "fuzz.jsonl", r)
	}, func(t *testing.T, _ []byte, res *importer.Result) {
		if len(res.Sessions) > 1 {
			t.Fatalf("%d sessions from one file", len(res.Sessions))
		}
		importertest.CheckValid(t, res)
	})
}
