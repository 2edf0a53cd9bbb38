package piebald

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// The chat's kept branch: the prompt (its text nodes joined), the reply
// that thinks, reads and runs a sub-agent, then answers, with its
// tokens, and the next prompt; the regenerated answer is left off, the
// deleted chat too; the sub-agent's chat is a sub-agent session of it.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, "testdata", 2, "7", "user assistant user")
	if s.Title != "Speed up the tile cache" || s.Cwd != "/home/u/atlas" || s.GitBranch != "cache" || s.Model != "claude-sonnet-4-5" {
		t.Fatalf("session %q %q %q %q", s.Title, s.Cwd, s.GitBranch, s.Model)
	}
	importertest.CheckTexts(t, s, loom.RoleUser, "Why is the tile cache slow?", "Do it.")
	p := s.Messages[1].Parts
	if len(p) != 4 || p[0].Type != loom.PartReasoning || p[1].Name != "read_file" || p[1].Status != loom.ToolCompleted ||
		p[2].Name != "task" || p[3].Text != "Get takes the write lock: use a read lock." {
		t.Errorf("reply %+v", p)
	}
	if u := s.Messages[1].Usage; u.InputTokens != 1200 || u.OutputTokens != 80 || u.ReasoningTokens != 20 || u.CacheReadTokens != 400 || u.CacheWriteTokens != 100 {
		t.Errorf("usage %+v", u)
	}
	if res.Skipped["off-branch"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	sub := importertest.Session(t, res, "8")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != "7" || importertest.Roles(sub) != "user assistant" {
		t.Errorf("sub-agent %s of %q: %s", sub.Kind, sub.ParentSourceID, importertest.Roles(sub))
	}
}

func TestImportAndCount(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, "testdata", 2, 5)
	importertest.RefusesOtherDB(t, Format{}, dbName)
	n, err := Format{}.CountSessions(t.Context(), importertest.OneBundle(t, Format{}, filepath.Join("testdata", dbName)))
	if n != 2 || err != nil {
		t.Errorf("counted %d, %v", n, err)
	}
}

// Its places: Piebald's data directory on each system;
// $LOOM_PIEBALD_DIR replaces them.
func TestRoots(t *testing.T) {
	if roots := (Format{}).Roots(nil, "/home/u"); len(roots) != 3 || roots[0] != "/home/u/.local/share/piebald" {
		t.Errorf("roots %v", roots)
	}
	if got := (Format{}).Roots(importertest.Getenv("LOOM_PIEBALD_DIR", "/x/pb"), "/home/u"); len(got) != 1 || got[0] != "/x/pb" {
		t.Errorf("with $LOOM_PIEBALD_DIR: %v", got)
	}
}
