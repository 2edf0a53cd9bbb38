package positassistant

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var root = filepath.Join("testdata", "workspaces")

const mainID = "8f3d6a2b-1c4e-4b7a-9d2f-0e6a5b4c3d21"

// The active branch in the tree's order: a read completed by the
// tool's message, the answer after it, and the regenerated answer in
// place of the one left off; the summary tag taken off; usage, title,
// branch and the workspace's directory.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, root, 2, mainID, "user assistant assistant user assistant")
	if s.Title != "Fit the monthly model" || s.Cwd != "/home/u/forecast" || s.GitBranch != "arima" || s.Model != "claude-sonnet-4-6" {
		t.Fatalf("session %q %q %q %q", s.Title, s.Cwd, s.GitBranch, s.Model)
	}
	p := s.Messages[1].Parts
	if len(p) != 3 || p[0].Type != loom.PartReasoning || p[1].Text != "I'll read the file." || p[2].Name != "read" ||
		p[2].Status != loom.ToolCompleted || string(p[2].Output) != `"month,sales\n2026-01,120\n"` {
		t.Errorf("first answer %+v", p)
	}
	importertest.CheckTexts(t, s, loom.RoleAssistant, "I'll read the file.", "Monthly data: use arima(sales, seasonal = c(0, 1, 1)).", "Run tsdiag(fit) to plot them.")
	if u := importertest.SumUsage(s); u.InputTokens != 170 || u.OutputTokens != 75 || u.CacheReadTokens != 150 || u.CacheWriteTokens != 50 {
		t.Errorf("usage %+v", u)
	}
	if res.Skipped["off-branch"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	sub := importertest.Session(t, res, "e41a7c90-3b2d-4f18-8a6c-2d9e0f1b7a53")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != mainID || sub.Cwd != "/home/u/forecast" || importertest.Roles(sub) != "user assistant" {
		t.Errorf("sub-agent %s of %q in %q: %s", sub.Kind, sub.ParentSourceID, sub.Cwd, importertest.Roles(sub))
	}
}

// A line of lm-messages.jsonl that is not JSON is one problem; the
// other messages are kept.
func TestDamagedLine(t *testing.T) {
	dir := importertest.CopyDir(t, "testdata")
	conv := filepath.Join(dir, "workspaces", "5c9e21f0", mainID)
	lines := importertest.ReadBytes(t, filepath.Join(conv, "lm-messages.jsonl"))
	_, rest, _ := bytes.Cut(lines, []byte("\n"))
	damaged := append([]byte("{not json\n"), rest...)
	importertest.WriteFile(t, filepath.Join(conv, "lm-messages.jsonl"), damaged, 0o644)
	res := importertest.ReadAll(t, Format{}, filepath.Join(dir, "workspaces"))
	if len(res.Problems) != 1 || res.Problems[0].Line != 1 {
		t.Fatalf("problems %v", res.Problems)
	}
	if s := importertest.Session(t, res, mainID); importertest.Roles(s) != "assistant assistant user assistant" {
		t.Errorf("roles %s", importertest.Roles(s))
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, root, 2, 7)
	importertest.RefusesFile(t, Format{}, "conversation.json", `{"root": {"id": "x"}, "messages": [`, "not Posit Assistant's conversation")
	importertest.RefusesFile(t, Format{}, "conversation.json", `{"root": {"id": "x"}}`, "no messages in it")
}
