package antigravity

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

const convID = "c0ffee00-1234-4abc-9def-0123456789ab"

var data = filepath.Join("testdata", "antigravity")

// What can be read of a conversation is its artifacts: each one a
// reply, the task, the plan and the walkthrough in the order the agent
// writes them, then the others; the task's heading is the title; the
// encrypted conversation is counted, not read.
func TestReadArtifacts(t *testing.T) {
	res := importertest.ReadAll(t, Format{}, data)
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions: a directory of metadata alone is none", len(res.Sessions))
	}
	s := importertest.Session(t, res, convID)
	if s.Title != "Add dark mode" || importertest.Roles(s) != "assistant assistant assistant assistant" {
		t.Errorf("session %q %q", s.Title, importertest.Roles(s))
	}
	var ids []string
	for _, m := range s.Messages {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"task.md", "implementation_plan.md", "walkthrough.md", "notes.md"}) {
		t.Errorf("artifacts %v", ids)
	}
	if got := s.Messages[0].CreatedAt.UnixMilli(); got != 1763629205123 {
		t.Errorf("task at %d, its metadata's updatedAt", got)
	}
	if string(s.Messages[0].Parts[0].Metadata) != `{"artifact":"task.md","artifact_type":"ARTIFACT_TYPE_TASK","summary":"Checklist for dark mode"}` {
		t.Errorf("metadata %s", s.Messages[0].Parts[0].Metadata)
	}
	if res.Skipped["encrypted-conversation"] != 1 || len(res.Problems) != 1 {
		t.Errorf("skipped %v, problems %v", res.Skipped, res.Problems)
	}
}

// Imported once, a second import adds nothing; an artifact rewritten is
// updated in place, and --watch follows a new one. The metadata file
// that is not JSON is a file that could not be read: the import exits 1.
func TestImportAndFollow(t *testing.T) {
	st := importertest.Store(t)
	if rep := importertest.Import(t, st, Format{}, data); rep.SessionsNew != 1 || rep.MessagesAdded != 4 || rep.FilesFailed != 1 {
		t.Fatalf("first import %+v", rep)
	}
	if rep := importertest.Import(t, st, Format{}, data); rep.SessionsNew != 0 || rep.MessagesAdded != 0 {
		t.Fatalf("second import %+v", rep)
	}
	dir := filepath.Join(t.TempDir(), brainDir, convID)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "task.md"), []byte("# Add dark mode\n"), 0o644)
	importertest.Follows(t, Format{}, filepath.Dir(filepath.Dir(dir)), func() {
		os.WriteFile(filepath.Join(dir, "implementation_plan.md"), []byte("# Plan\n"), 0o644)
	}, 1)
}

func TestRoots(t *testing.T) {
	if got := (Format{}).Roots(nil, filepath.FromSlash("/home/u")); !slices.Equal(got, []string{filepath.Join(filepath.FromSlash("/home/u"), ".gemini", "antigravity")}) {
		t.Errorf("roots %v", got)
	}
}
