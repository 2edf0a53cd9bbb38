package importer_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/importertest"
)

// A sub-agent whose transcript is a file of its own (every Codex
// sub-agent) is linked from its parent's spawn call by an agent part,
// whichever file comes in first: the parent alone (its sub-agent's file
// not written yet), then the sub-agent a run later; or both in one run.
func TestSubagentInAnotherFileIsLinked(t *testing.T) {
	const (
		parentFile = "rollout-2026-07-20T09-14-03-019f7ecd-c978-7a41-9c3e-5b1f0d2e8a47.jsonl"
		childFile  = "rollout-2026-07-20T09-14-31-019f7ece-35a7-7b62-a0d4-6e8f1c3b9a25.jsonl"
		childKey   = "codex:019f7ece-35a7-7b62-a0d4-6e8f1c3b9a25"
	)
	for _, together := range []bool{false, true} {
		fx := newFixture(t)
		dir := filepath.Join(fx.dir, "sessions", "2026", "07", "20")
		os.MkdirAll(dir, 0o755)
		install := func(name string) {
			b := importertest.ReadBytes(t, filepath.Join("codex", "testdata", name))
			importertest.WriteFile(t, filepath.Join(dir, name), b, 0o644)
		}
		run := func() {
			im := &importer.Importer{Store: fx.st, UserID: "alice"}
			rep, err := im.Run(context.Background(), []importer.Target{{Format: codex.Format{}, Roots: []string{fx.dir}}})
			if err != nil || rep.FilesFailed() != 0 {
				t.Fatalf("import: %v %+v", err, rep.Tools[0])
			}
		}
		install(parentFile)
		if together {
			install(childFile)
		} else {
			run()
			install(childFile)
		}
		run()
		child, cmsgs := fx.session(childKey)
		first := ""
		for _, m := range cmsgs {
			if m.Role != loom.RoleSystem {
				first = m.Role
				break
			}
		}
		if child.Kind != loom.KindSubagent || first != loom.RoleUser || child.TurnCount == 0 {
			t.Fatalf("together=%v: sub-agent %s (%d turns) starts with a %s message, want its task", together, child.Key, child.TurnCount, first)
		}
		_, pmsgs := fx.session("codex:019f7ecd-c978-7a41-9c3e-5b1f0d2e8a47")
		linked := 0
		for _, m := range pmsgs {
			for _, p := range m.Parts {
				if p.Type == loom.PartAgent && p.SessionID == child.ID {
					linked++
				}
				if p.Type == loom.PartAgent && p.SessionID == "" {
					t.Errorf("together=%v: an agent part names no session: %+v", together, p)
				}
			}
		}
		if linked != 1 {
			t.Errorf("together=%v: %d agent parts of the parent name the sub-agent %s, want 1", together, linked, child.ID)
		}
	}
}
