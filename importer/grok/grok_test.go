package grok

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	sessions = filepath.Join("testdata", "sessions")
	dir      = filepath.Join(sessions, "%2Fhome%2Fu%2Frepo", "019a0000-0000-7000-8000-000000000001")
	history  = filepath.Join(dir, historyFile)
)

// A Grok session: reasoning, a call and the reply after it one
// assistant message per turn; the working directory from the group's
// name; summary.json's title and model; the turn's usage from the
// update stream; Grok's own reminder a system message.
func TestRead(t *testing.T) {
	res := importertest.ReadAll(t, Format{}, sessions)
	importertest.CheckValidOf(t, Tool, res)
	s := importertest.Session(t, res, "019a0000-0000-7000-8000-000000000001")
	if importertest.Roles(s) != "system user assistant system" || s.Cwd != "/home/u/repo" || s.Title != "Current git branch" || s.GitBranch != "main" {
		t.Fatalf("session %s %q %q", importertest.Roles(s), s.Cwd, s.Title)
	}
	r := s.Messages[2]
	if r.Parts[0].Type != loom.PartReasoning || r.Parts[1].Status != loom.ToolCompleted || r.Parts[2].Text != "The branch is main." || r.Model != "grok-code-fast-1" {
		t.Errorf("reply %+v", r.Parts)
	}
	if u := r.Usage; u.InputTokens != 2000 || u.CacheReadTokens != 3000 || u.OutputTokens != 40 || u.ReasoningTokens != 12 {
		t.Errorf("usage %+v", u)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, sessions, 1, 4)
	root := importertest.CopyDir(t, sessions)
	importertest.Follows(t, Format{}, root, func() {
		importertest.AppendLines(t, filepath.Join(root, "%2Fhome%2Fu%2Frepo", filepath.Base(dir), historyFile), `{"type":"user","content":"Thanks"}`)
	}, 1)
	importertest.Malformed(t, Format{}, history, "s/"+historyFile)
}
