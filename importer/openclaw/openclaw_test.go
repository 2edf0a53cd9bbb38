package openclaw

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	agents   = filepath.Join("testdata", "agents")
	mainFile = filepath.Join(agents, "main", "sessions", "oc-1.jsonl")
)

// OpenClaw's transcripts, the one set aside by a reset too, each a
// session read by pi's reader; the index beside them is no session.
func TestRead(t *testing.T) {
	res := importertest.ReadSessions(t, Format{}, agents, 2)
	s := importertest.Session(t, res, "oc-1")
	if importertest.Roles(s) != "user assistant assistant" || s.Messages[1].Parts[0].Status != loom.ToolCompleted {
		t.Errorf("session %s %+v", importertest.Roles(s), s.Messages[1].Parts)
	}
	importertest.Session(t, res, "oc-0")
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollows(t, Format{}, agents, 2, 5, filepath.Join("main", "sessions", "oc-1.jsonl"),
		`{"type":"message","id":"u2","parentId":"a2","timestamp":"2026-02-01T09:01:00.000Z","message":{"role":"user","content":"Thanks"}}`)
	importertest.Malformed(t, Format{}, mainFile, "s.jsonl")
}

// OpenClaw's state directory, moved or not, and Clawdbot's and
// Moltbot's before it.
func TestRoots(t *testing.T) {
	home := filepath.FromSlash("/home/u")
	want := []string{filepath.Join(home, ".openclaw", "agents"), filepath.Join(home, ".clawdbot", "agents"), filepath.Join(home, ".moltbot", "agents"), filepath.Join(home, ".kimi_openclaw", "agents")}
	if got := (Format{}).Roots(nil, home); !slices.Equal(got, want) {
		t.Errorf("roots %v", got)
	}
	moved := importertest.Getenv(EnvState, "/srv/oc")
	if got := (Format{}).Roots(moved, home); got[0] != filepath.Join("/srv/oc", "agents") {
		t.Errorf("roots %v", got)
	}
}
