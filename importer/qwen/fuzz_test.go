package qwen

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a chat file: it must not panic, must
// end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(project, "*", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join(project, "subagents", "*", "*.jsonl"))
	importertest.SeedFiles(f, append(files, more...)...)
	importertest.SeedStrings(f,
		"",
		"{}\n",
		`{"uuid":"a","parentUuid":"a","type":"assistant","message":{"parts":[{"functionCall":{}},{"functionCall":{"id":"c"}}]}}`,
		`{"uuid":"a","type":"assistant","message":{"parts":[{"functionCall":{"id":"c","args":[1]}}]},"usageMetadata":{"promptTokenCount":-5,"cachedContentTokenCount":1e18}}`+"\n"+
			`{"uuid":"b","parentUuid":"a","type":"tool_result","message":{"parts":[{"functionResponse":{"id":"c","response":{"error":{"x":1}}}}]}}`,
		`{"uuid":"a","type":"system","subtype":"chat_compression","systemPayload":{"compressedHistory":[{"role":"user","parts":[{"text":7}]}]}}`,
		`{"uuid":"a","type":"user","subtype":"notification","message":{"parts":[{"inlineData":{"data":"AA=="}},{"fileData":{}}]}}`,
	)
	importertest.FuzzStream(f, func(ctx context.Context, r io.Reader) (*importer.Result, error) {
		res := &importer.Result{}
		s, err := readChat(ctx, res, "fuzz.jsonl", r, "")
		if s != nil {
			res.Sessions = append(res.Sessions, s)
		}
		return res, err
	}, func(t *testing.T, data []byte, res *importer.Result) {
		importertest.CheckComplete(t, res)
		importertest.CheckMessagesPerLine(t, res, data, func(lines int) int { return lines })
	})
}
