package gptme

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a conversation log: it must not
// panic, must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, filepath.Join(logs, hello, logFile), filepath.Join(logs, flat, logFile))
	f.Add([]byte(`{"role":"assistant","content":"@a(b): {\"x\":1} @c(b): {}\n@d(b): {"}` + "\n" + `{"role":"system","call_id":"b","content":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := read(ctx, "conversation.jsonl", "c", "", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		importertest.CheckValidOf(t, Tool, res)
	})
}
