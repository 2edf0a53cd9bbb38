package cortex

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	conversations = filepath.Join("testdata", "conversations")
	split         = filepath.Join(conversations, "5c8d0e2f-3a4b-4c5d-9e7f-8091a2b3c4d5.json")
)

// A Cortex Code conversation: its internal block a system message, the
// prompt, a reply with a SQL call completed by the next message's
// result; a conversation whose history is in its .history.jsonl; the
// backup beside them is no conversation.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, conversations, 2, "4b7c9d1e-2f3a-4b5c-8d6e-7f8091a2b3c4", "system user assistant")
	if s.Title != "Top customers by revenue" || s.GitBranch != "main" {
		t.Fatalf("session %q %q", s.Title, s.GitBranch)
	}
	p := s.Messages[2].Parts
	if len(p) != 3 || p[1].Name != "snowflake_sql_execute" || p[1].Status != loom.ToolCompleted || p[2].Text != "ACME, Globex and Initech." {
		t.Errorf("reply %+v", p)
	}
	sp := importertest.Session(t, res, "5c8d0e2f-3a4b-4c5d-9e7f-8091a2b3c4d5")
	if importertest.Roles(sp) != "user assistant" || sp.Title != "" {
		t.Errorf("split %s %q", importertest.Roles(sp), sp.Title)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollows(t, Format{}, conversations, 2, 5, filepath.Base(split[:len(split)-len(".json")])+historySuffix,
		`{"role": "user", "id": "u2", "content": [{"type": "text", "text": "And their row counts?"}]}`)
}
