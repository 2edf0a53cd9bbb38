package pi

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session file: it must not panic,
// must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	importertest.SeedFiles(f, files...)
	const head = `{"type":"session","id":"s"}` + "\n"
	importertest.SeedStrings(f,
		"",
		"{}\n",
		head+`{"type":"message","id":"a","parentId":"a","message":{"role":"toolResult","toolCallId":"x"}}`,
		head+`{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall"},{"type":"toolCall","id":"c"}]}}`+"\n"+
			`{"type":"message","id":"a","parentId":"a","message":{"role":"toolResult","toolCallId":"c","content":"x","isError":true}}`,
		head+`{"type":"compaction","id":"k","summary":"s","tokensBefore":1e99}`+"\n"+`{"type":"message","message":{"role":"user","content":7}}`,
		head+`{"type":"message","id":"b","parentId":"z","message":{"role":"bashExecution","command":"ls","exitCode":2}}`,
	)
	importertest.FuzzStream(f, func(ctx context.Context, r io.Reader) (*importer.Result, error) {
		return read(ctx, "fuzz.jsonl", r)
	}, func(t *testing.T, data []byte, res *importer.Result) {
		importertest.CheckComplete(t, res)
		importertest.CheckMessagesPerLine(t, res, data, func(lines int) int { return 2*lines*lines + maxForkMessages })
	})
}
