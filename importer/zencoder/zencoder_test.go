package zencoder

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	sessions = filepath.Join("testdata", "sessions")
	mainFile = filepath.Join(sessions, "7e1f0a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b.jsonl")
)

// A Zencoder session: its system message names the working directory,
// a tagged user block is Zencoder's context, reasoning and calls join
// the reply, a call's result completes it, and the sub-agent a result
// names is linked and is a sub-agent of the session.
func TestRead(t *testing.T) {
	res, s := importertest.ReadValidFor(t, Format{}, sessions, "7e1f0a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b")
	if got := importertest.Roles(s); got != "system user system assistant" || s.Cwd != "/home/u/web" {
		t.Fatalf("roles %s, cwd %q", got, s.Cwd)
	}
	tl := importertest.TallyOf(s)
	if tl.Reasoning != 1 || tl.Tools[loom.ToolCompleted] != 2 || tl.Agents != 1 {
		t.Errorf("%+v", tl)
	}
	sub := importertest.Session(t, res, "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != s.SourceID {
		t.Errorf("sub-agent %s of %q", sub.Kind, sub.ParentSourceID)
	}
	if res.Skipped["finish"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollows(t, Format{}, sessions, 2, 6, filepath.Base(mainFile),
		`{"role":"user","createdAt":"2026-09-14T10:02:00.000Z","content":[{"type":"text","text":"Fix it."}]}`)
	importertest.Malformed(t, Format{}, mainFile, "s/x.jsonl")
}
