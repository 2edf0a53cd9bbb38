package antigravity

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead builds a conversation of arbitrary artifact and metadata
// bytes: it must not panic, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	f.Add([]byte("# Add dark mode\n- [ ] toggle\n"), []byte(`{"artifactType":"ARTIFACT_TYPE_TASK","updatedAt":"2025-11-20T09:00:05Z"}`))
	f.Add([]byte(""), []byte(`{"updatedAt":"9999-99-99"}`))
	f.Fuzz(func(t *testing.T, text, meta []byte) {
		res := &importer.Result{}
		a := &artifact{path: "task.md", text: string(text), modified: time.Unix(1763000000, 0)}
		_ = json.Unmarshal(meta, &a.meta)
		importertest.CheckValidOf(t, Tool, build(res, "c", []string{"task.md"}, map[string]*artifact{"task.md": a}))
	})
}
