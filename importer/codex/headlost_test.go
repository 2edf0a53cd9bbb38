package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// A rollout whose first line, its own session_meta, is lost is one
// problem line, and its session keeps the id its file is named by. A
// sub-agent's or fork's rollout starts its copy of the parent's history
// with the parent's session_meta: that one is not taken for the
// session's own (before, the session was read under its parent's id,
// its messages joined to the parent's), and the session is read as a
// fork of that parent, its own messages all kept in order.
func TestLostSessionMeta(t *testing.T) {
	for _, name := range []string{
		"rollout-2026-07-20T09-14-31-019f7ece-35a7-7b62-a0d4-6e8f1c3b9a25.jsonl", // a sub-agent of 0.146 with a copy
		"rollout-2026-11-20T10-02-12-019fa2b0-6a37-7f02-8c44-5d1e9b3a2f60.jsonl", // a sub-agent of 0.169 without one
		"rollout-2026-07-20T09-14-03-019f7ecd-c978-7a41-9c3e-5b1f0d2e8a47.jsonl", // a main session
	} {
		t.Run(name, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			whole := readFile(t, filepath.Join("testdata", name)).Sessions[0]
			lines := bytes.SplitN(orig, []byte("\n"), 2)
			path := filepath.Join(t.TempDir(), name)
			importertest.WriteFile(t, path, append([]byte("{\"timestamp\":\"2026-07-20T09:1\n"), lines[1]...), 0o644)
			res := readFile(t, path)
			if len(res.Problems) != 1 || res.Problems[0].Line != 1 {
				t.Errorf("problems %v, want one, of line 1", res.Problems)
			}
			if len(res.Sessions) != 1 {
				t.Fatalf("%d sessions", len(res.Sessions))
			}
			s := res.Sessions[0]
			if s.SourceID != whole.SourceID {
				t.Errorf("session %s, want %s, the file's", s.SourceID, whole.SourceID)
			}
			if s.ParentSourceID == s.SourceID {
				t.Errorf("session %s is its own parent", s.SourceID)
			}
			var ids []string
			for _, m := range s.Messages {
				ids = append(ids, m.ID)
			}
			// Every message of the whole reading but the session_meta's
			// own (its instructions) is there, in order.
			for _, m := range whole.Messages {
				if strings.HasSuffix(m.ID, ":1") && m.Role == loom.RoleSystem {
					continue
				}
				i := slices.Index(ids, m.ID)
				if i < 0 {
					t.Errorf("message %s (%s) lost", m.ID, m.Role)
					continue
				}
				ids = ids[i+1:]
			}
			switch {
			case whole.Kind == loom.KindMain && s.Kind != loom.KindMain:
				t.Errorf("a main session read as %s", s.Kind)
			case bytes.Count(orig, []byte(`"type":"session_meta"`)) > 1 && (s.Kind != loom.KindFork || s.ParentSourceID != whole.ParentSourceID):
				t.Errorf("read as %s of %q, want a fork of %s, whose history it copies", s.Kind, s.ParentSourceID, whole.ParentSourceID)
			}
		})
	}
}
