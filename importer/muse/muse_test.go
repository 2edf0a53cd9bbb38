package muse

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	sessions = filepath.Join("testdata", "sessions")
	file     = filepath.Join(sessions, "2026", "05", "01", "ms-1", logName)
)

// A Muse log: the prompt, a reply's calls and text as one message, the
// result completing its call, the workspace root; telemetry skipped;
// the sub-agent's log a sub-agent of the session.
func TestRead(t *testing.T) {
	res, s := importertest.ReadValidFor(t, Format{}, sessions, "ms-1")
	if importertest.Roles(s) != "user assistant" || s.Cwd != "/home/u/app" {
		t.Fatalf("session %s %q", importertest.Roles(s), s.Cwd)
	}
	if p := s.Messages[1].Parts; len(p) != 2 || p[0].Status != loom.ToolCompleted || p[1].Text != "One file: main.rs." {
		t.Errorf("reply %+v", p)
	}
	if sub := importertest.Session(t, res, "ms-1-sa-1"); sub.Kind != loom.KindSubagent || sub.ParentSourceID != "ms-1" {
		t.Errorf("sub-agent %+v", sub)
	}
	if res.Skipped["run:model_completed"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollows(t, Format{}, sessions, 2, 4, filepath.Join("2026", "05", "01", "ms-1", logName),
		`{"stream":{"id":"ms-1"},"recorded_at":1777600009000000,"payload_type":"runtime.session","payload":{"kind":"run","event":{"kind":"started","prompt":"Thanks"}}}`)
	importertest.Malformed(t, Format{}, file, "x/"+logName)
}
