package codebuff

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

var projects = filepath.Join("testdata", "projects")

// A chat: a prompt; a reply of reasoning, a read_files call with its
// output, a file picker sub-agent (its prompt, a find_files call and its
// text: a session linked from the reply) and text; an error message,
// which is no message; a second prompt and a reply of plain content.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, projects, 2, "2026-03-04T10-15-30.123Z",
		"user assistant user assistant")
	if want := time.Date(2026, 3, 4, 10, 15, 30, 123e6, time.UTC); !s.CreatedAt.Equal(want) {
		t.Errorf("created %v, want %v", s.CreatedAt, want)
	}
	p := s.Messages[1].Parts
	if len(p) != 4 || p[0].Type != loom.PartReasoning || p[1].Name != "read_files" || p[1].Status != loom.ToolCompleted ||
		string(p[1].Input) != `{"paths":["notes.txt"]}` || p[2].Type != loom.PartAgent || p[3].Text != "notes.txt has two lines, and README.md is at the root." {
		t.Fatalf("reply %+v", p)
	}
	sub := importertest.Session(t, res, p[2].SessionID)
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != s.SourceID || importertest.Roles(sub) != "user assistant" ||
		sub.Messages[0].Parts[0].Text != "Find the README." || sub.Messages[1].Parts[0].Name != "find_files" {
		t.Errorf("sub-agent %+v", sub)
	}
	if res.Skipped["error-message"] != 1 || res.Skipped["block:mode-divider"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	if s.Messages[3].Parts[0].Text != "You're welcome." {
		t.Errorf("last reply %+v", s.Messages[3].Parts)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, projects, 2, 6)
}

// Sub-agents nested past the bound are a problem, not a stack overflow;
// a file that is no chat is an error.
func TestBounds(t *testing.T) {
	deep := `{"type": "text", "content": "bottom"}`
	for range maxDepth + 3 {
		deep = `{"type": "agent", "agentId": "a", "blocks": [` + deep + `]}`
	}
	dir := filepath.Join(t.TempDir(), "p", "chats", "2026-01-01T00-00-00.000Z")
	os.MkdirAll(dir, 0o755)
	f := filepath.Join(dir, "chat-messages.json")
	os.WriteFile(f, []byte(`[{"id": "m", "variant": "ai", "blocks": [`+deep+`]}]`), 0o644)
	res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{f}})
	if err != nil || len(res.Problems) != 1 {
		t.Fatalf("%v %v", err, res.Problems)
	}
	os.WriteFile(f, []byte(`{"not": "a chat"}`), 0o644)
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{f}}); err == nil {
		t.Error("a file that is no chat read without an error")
	}
}
