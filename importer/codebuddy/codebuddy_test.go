package codebuddy

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	projects = filepath.Join("testdata", "projects")
	file     = filepath.Join(projects, "home-u-web", "cb-1.jsonl")
)

// A CodeBuddy transcript: reasoning and a call join one reply, the
// call completed by its result with the usage of its model call; the
// sub-agent's transcript is a sub-agent of the session.
func TestRead(t *testing.T) {
	res := importertest.ReadAll(t, Format{}, projects)
	importertest.CheckValidOf(t, Tool, res)
	s := importertest.Session(t, res, "cb-1")
	if importertest.Roles(s) != "user assistant assistant" || s.Cwd != "/home/u/web" {
		t.Fatalf("session %s %q", importertest.Roles(s), s.Cwd)
	}
	r := s.Messages[1]
	if r.Parts[0].Type != loom.PartReasoning || r.Parts[1].Status != loom.ToolCompleted || string(r.Parts[1].Output) != `"12 passing"` {
		t.Errorf("reply %+v", r.Parts)
	}
	if r.Usage.InputTokens != 900 || r.Usage.CacheReadTokens != 400 || r.Usage.APICalls != 1 || s.Messages[2].Usage.OutputTokens != 12 {
		t.Errorf("usage %+v %+v", r.Usage, s.Messages[2].Usage)
	}
	sub := importertest.Session(t, res, "cb-1/agent-1")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != "cb-1" {
		t.Errorf("sub-agent %s of %q", sub.Kind, sub.ParentSourceID)
	}
	if res.Skipped["unknown:file-history-snapshot"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, projects, 2, 5)
	root := importertest.CopyDir(t, projects)
	importertest.Follows(t, Format{}, root, func() {
		importertest.AppendLines(t, filepath.Join(root, "home-u-web", "cb-1.jsonl"), `{"id":"i7","type":"message","role":"user","content":"Thanks","timestamp":1772000020000}`)
	}, 1)
	importertest.Malformed(t, Format{}, file, "s.jsonl")
}
