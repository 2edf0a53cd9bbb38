package deepseektui

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var sessions = filepath.Join("testdata", "sessions")

// A DeepSeek TUI session: reasoning and a call completed by the next
// message's result, the reply after it; the metadata's title and
// workspace; latest.json beside is no session.
func TestRead(t *testing.T) {
	_, s := importertest.ReadSession(t, Format{}, sessions, 1, "0f6c2b1e-7a44-4e0b-9a51-3d2e8c7b1f90", "user assistant assistant")
	if s.Title != "Count the Rust files" || s.Cwd != "/home/u/crate" {
		t.Fatalf("session %q %q", s.Title, s.Cwd)
	}
	p := s.Messages[1].Parts
	if p[0].Type != loom.PartReasoning || p[1].Name != "run_shell" || p[1].Status != loom.ToolCompleted || string(p[1].Output) != `"src/main.rs\nsrc/lib.rs"` {
		t.Errorf("reply %+v", p)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, sessions, 1, 3)
	importertest.RefusesFile(t, Format{}, "broken.json", `{"metadata": {"id": "x"}, "messages": [`, "")
}
