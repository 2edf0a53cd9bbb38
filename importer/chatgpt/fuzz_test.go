package chatgpt

import (
	"context"
	"io"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as conversations.json: it must not
// panic, must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, sample)
	importertest.SeedStrings(f,
		"", "[]", "[", "[1,]", `[{"mapping":{}}]`, `["x", null, {"id":"a","mapping":{"n":null}}]`,
		`[{"id":"a","mapping":{"a":{"parent":"b","message":{"author":{"role":"user"},"content":{"parts":["x"]}}},"b":{"parent":"a"}},"current_node":"a"}]`,
		`[{"id":"a","mapping":{"a":{"message":{"id":"m","author":{"role":"tool","name":"python"},"create_time":"NaN","content":{"content_type":"system_error","text":"x"}}}}}]`,
		`[{"id":"a","mapping":{"a":{"message":{"id":"m","author":{"role":"assistant"},"recipient":"x","content":{"content_type":"code","text":"{"}}},"b":{"parent":"a","message":{"id":"m","author":{"role":"user"},"content":{"parts":[{"asset_pointer":"p"}]}}}}}]`,
	)
	importertest.FuzzStream(f, func(ctx context.Context, r io.Reader) (*importer.Result, error) {
		return importer.ReadExportFrom(ctx, Tool, "conversations.json", r, func(i int, elem []byte, res *importer.Result) error {
			return readConversation("conversations.json", i, elem, res)
		})
	}, func(t *testing.T, _ []byte, res *importer.Result) {
		importertest.CheckValidOf(t, Tool, res)
	})
}
