package auggie

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var sessions = filepath.Join("testdata", "sessions")

// An Auggie session: the prompt; thinking, the call and the reply of
// the next exchange, whose result completes the call, as one reply of
// two model calls; the workspace folder and the title.
func TestRead(t *testing.T) {
	_, s := importertest.ReadValidFor(t, Format{}, sessions, "aug-1")
	if importertest.Roles(s) != "user assistant" || s.Cwd != "/home/u/docs" || s.Title != "Fix the typo" {
		t.Fatalf("session %s %q %q", importertest.Roles(s), s.Cwd, s.Title)
	}
	p := s.Messages[1].Parts
	if len(p) != 3 || p[0].Type != loom.PartReasoning || p[1].Status != loom.ToolCompleted || p[2].Text != "Fixed: Helo is now Hello." || s.Messages[1].Usage.APICalls != 2 {
		t.Errorf("reply %+v", p)
	}
	importertest.ImportsOnce(t, Format{}, sessions, 1, 2)
}
