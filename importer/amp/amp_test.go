package amp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

const threadID = "T-7f3e1b2a-0000-4000-8000-000000000001"

var fixture = filepath.Join("testdata", "threads")

// TestRead reads a thread: every prompt, reply, thinking block and tool
// call once and in order, each call with its result (an error run is an
// error), each reply's usage and model.
func TestRead(t *testing.T) {
	res, s := importertest.ReadValidFor(t, Format{}, fixture, threadID)
	if got := importertest.Roles(s); got != "user assistant assistant" {
		t.Fatalf("roles %q", got)
	}
	if s.Title != "Fix the flaky test" || s.Cwd != "/home/u/app" || s.CreatedAt.UnixMilli() != 1763632800000 {
		t.Errorf("session %+v", s)
	}
	r := s.Messages[1]
	if r.ID != threadID+":1" || r.Parts[0].Type != loom.PartReasoning || r.Parts[1].Text != "Reading the test." || r.Model != "claude-sonnet-4-5" {
		t.Errorf("reply %+v", r)
	}
	if p := r.Parts[2]; p.Name != "Read" || p.Status != loom.ToolCompleted || !strings.HasPrefix(string(p.Output), `"func TestRetry`) {
		t.Errorf("read %+v", p)
	}
	if p := r.Parts[3]; p.Name != "Bash" || p.Status != loom.ToolError || p.Error != "exit status 1" || string(p.Output) != `"--- FAIL: TestRetry"` {
		t.Errorf("bash %+v", p)
	}
	if u := r.Usage; u.InputTokens != 12 || u.CacheWriteTokens != 3000 || u.OutputTokens != 90 {
		t.Errorf("usage %+v", u)
	}
	if u := s.Messages[2].Usage; u.CacheReadTokens != 3000 || u.OutputTokens != 40 {
		t.Errorf("usage %+v", u)
	}
	for k, n := range map[string]int{"unknown:hologram": 1, "orphan-tool-result": 1, "info": 1} {
		if res.Skipped[k] != n {
			t.Errorf("skipped %v, want %d %s", res.Skipped, n, k)
		}
	}
}

// TestImportTwice: a thread Amp rewrites with a new turn brings only the
// new messages; an import after that adds nothing; --watch follows it.
func TestImportTwice(t *testing.T) {
	dir := t.TempDir()
	data := importertest.ReadBytes(t, filepath.Join(fixture, threadID+".json"))
	file := filepath.Join(dir, threadID+".json")
	cut := strings.Index(string(data), `    {"role": "assistant", "messageId": 3`)
	short := string(data[:cut-2]) + "\n  ]\n}\n"
	importertest.WriteFile(t, file, []byte(short), 0o644)
	st := importertest.Store(t)
	w := importertest.ImportThenWatch(t, st, Format{}, dir)
	tmp := file + ".tmp"
	importertest.WriteFile(t, tmp, data, 0o644)
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	w.Follows(t, "the thread Amp rewrote")
	importertest.NothingNew(t, st, Format{}, dir)
	if u := importertest.StoredUsage(t, st, Tool, threadID); u.OutputTokens != 130 {
		t.Errorf("usage %+v", u)
	}
}

// TestBadInput: a file that is not a thread is an error naming it; a
// thread with blocks Amp did not write keeps the rest.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "T-bad.json")
	importertest.WriteFile(t, bad, []byte(`{"messages": 5`), 0o644)
	if _, err := (Format{}).Read(t.Context(), bundle(bad)); err == nil || !strings.Contains(err.Error(), "T-bad.json") {
		t.Errorf("err %v", err)
	}
	odd := filepath.Join(dir, "T-odd.json")
	importertest.WriteFile(t, odd, []byte(`{"id":"T-odd","messages":[{"role":"assistant","content":[5,{"type":""},{"type":"tool_use"},{"type":"text","text":"kept"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"T-odd:0/2","content":[{"type":"text","text":"ok"}]}]}]}`), 0o644)
	res := importertest.ReadFile(t, Format{}, odd)
	s := importertest.Session(t, res, "T-odd")
	if len(res.Problems) != 2 || s.Messages[0].Parts[0].Status != loom.ToolCompleted || s.Messages[0].Text() != "kept" {
		t.Errorf("problems %v session %+v", res.Problems, s.Messages[0])
	}
}

func TestRoots(t *testing.T) {
	got := Format{}.Roots(func(k string) string { return map[string]string{"XDG_DATA_HOME": "/x"}[k] }, "/home/u")
	if !slices.Equal(got, []string{filepath.Join("/x", "amp", "threads")}) {
		t.Errorf("roots %v", got)
	}
}

func bundle(path string) importer.Bundle { return importer.Bundle{Files: []string{path}} }
