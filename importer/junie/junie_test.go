package junie

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	sessions = filepath.Join("testdata", "sessions")
	file     = filepath.Join(sessions, "session-260206-154351-1p1g", eventsFile)
)

// A Junie session: the prompt; the command's last state, the result
// and the model call's usage as one reply; the index's task name.
func TestRead(t *testing.T) {
	_, s := importertest.ReadValidFor(t, Format{}, sessions, "session-260206-154351-1p1g")
	if importertest.Roles(s) != "user assistant" || s.Title != "Run the unit tests" {
		t.Fatalf("session %s %q", importertest.Roles(s), s.Title)
	}
	r := s.Messages[1]
	if len(r.Parts) != 2 || r.Parts[0].Name != "terminal" || string(r.Parts[0].Output) != `"BUILD SUCCESSFUL"` || r.Parts[1].Text != "All tests pass." {
		t.Errorf("reply %+v", r.Parts)
	}
	if r.Usage.InputTokens != 2126 || r.Usage.CacheReadTokens != 100 || r.Usage.APICalls != 1 || r.Model != "claude-haiku-4-5" || r.Parts[0].Status != loom.ToolCompleted {
		t.Errorf("usage %+v", r.Usage)
	}
}

func TestImport(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, sessions, 1, 2)
	importertest.Malformed(t, Format{}, file, "s/"+eventsFile)
}
