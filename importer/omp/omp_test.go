package omp

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	sessions = filepath.Join("testdata", "sessions")
	mainFile = filepath.Join(sessions, "--home-u-proj--", "2026-03-01T10-00-00_omp-main.jsonl")
)

// An omp session read by pi's reader: its header's title, its tool call
// completed, omp's model_usage entry skipped; the sub-agent's transcript
// beside it is a sub-agent of it.
func TestRead(t *testing.T) {
	res := importertest.ReadAll(t, Format{}, sessions)
	importertest.CheckValidOf(t, Tool, res)
	s := importertest.Session(t, res, "omp-main")
	if s.Title != "Count the Go files" || s.Cwd != "/home/u/proj" || importertest.Roles(s) != "user assistant assistant" {
		t.Errorf("session %q %q %s", s.Title, s.Cwd, importertest.Roles(s))
	}
	if p := s.Messages[1].Parts[1]; p.Name != "task" || p.Status != loom.ToolCompleted {
		t.Errorf("the task call %+v", p)
	}
	sub := importertest.Session(t, res, "omp-sub")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != "omp-main" {
		t.Errorf("sub-agent %s of %q", sub.Kind, sub.ParentSourceID)
	}
	if res.Skipped["model_usage"] != 1 || res.Skipped["custom"] != 0 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

// Imported once, a second import adds nothing; --watch follows a turn
// omp appends; a broken line is a problem with its file and line.
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, sessions, 2, 5)
	root := importertest.CopyDir(t, sessions)
	file := filepath.Join(root, "--home-u-proj--", filepath.Base(mainFile))
	importertest.Follows(t, Format{}, root, func() {
		importertest.AppendLines(t, file,
			`{"type":"message","id":"u2","parentId":"a2","timestamp":"2026-03-01T10:01:00.000Z","message":{"role":"user","content":"Thanks"}}`)
	}, 1)
	importertest.Malformed(t, Format{}, mainFile, "s.jsonl")
}

func TestRoots(t *testing.T) {
	home := filepath.FromSlash("/home/u")
	if got := (Format{}).Roots(nil, home); !slices.Equal(got, []string{filepath.Join(home, ".omp", "agent", "sessions")}) {
		t.Errorf("roots %v", got)
	}
}
