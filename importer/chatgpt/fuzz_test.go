package chatgpt

import (
	"bytes"
	"context"
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
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := importertest.ReadTimed(t, func(ctx context.Context) (*importer.Result, error) {
			return importer.ReadExportFrom(ctx, Tool, "conversations.json", bytes.NewReader(data), func(i int, elem []byte, res *importer.Result) error {
				return readConversation("conversations.json", i, elem, res)
			})
		})
		if err != nil {
			return
		}
		importertest.CheckValidOf(t, Tool, res)
	})
}
