package chatgpt

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as conversations.json: it must not
// panic, must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	data, err := os.ReadFile(sample)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	for _, s := range []string{
		"", "[]", "[", "[1,]", `[{"mapping":{}}]`, `["x", null, {"id":"a","mapping":{"n":null}}]`,
		`[{"id":"a","mapping":{"a":{"parent":"b","message":{"author":{"role":"user"},"content":{"parts":["x"]}}},"b":{"parent":"a"}},"current_node":"a"}]`,
		`[{"id":"a","mapping":{"a":{"message":{"id":"m","author":{"role":"tool","name":"python"},"create_time":"NaN","content":{"content_type":"system_error","text":"x"}}}}}]`,
		`[{"id":"a","mapping":{"a":{"message":{"id":"m","author":{"role":"assistant"},"recipient":"x","content":{"content_type":"code","text":"{"}}},"b":{"parent":"a","message":{"id":"m","author":{"role":"user"},"content":{"parts":[{"asset_pointer":"p"}]}}}}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		res, err := importer.ReadExportFrom(ctx, Tool, "conversations.json", bytes.NewReader(data), func(i int, elem []byte, res *importer.Result) error {
			return readConversation("conversations.json", i, elem, res)
		})
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("read took %v", d)
		}
		if err != nil {
			return
		}
		importertest.CheckValidOf(t, Tool, res)
	})
}
