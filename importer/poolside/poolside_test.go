package poolside

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var root = filepath.Join("testdata", "trajectories")

const id = "chat_5b7e0c1a-9d2f-4e3b-8a61-0f4c2d9e7b35"

// A prompt, then one reply: the thought, the call its result
// completes and the text, with both inferences' tokens and the model
// of the last; the working directory is the session's first.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, root, 1, id, "user assistant")
	if s.Cwd != "/home/u/ledger" || s.Model != "poolside/laguna" {
		t.Fatalf("session %q %q", s.Cwd, s.Model)
	}
	p := s.Messages[1].Parts
	if len(p) != 3 || p[0].Type != loom.PartReasoning || p[1].Name != "run_shell" || p[1].Status != loom.ToolCompleted ||
		string(p[1].Output) != `"--- FAIL: TestBalance: got 99, want 100"` || p[2].Text != "The fee is rounded down before it is added: round it after." {
		t.Errorf("reply %+v", p)
	}
	if u := s.Messages[1].Usage; u.InputTokens != 1900 || u.OutputTokens != 70 || u.CacheReadTokens != 1100 || u.CacheWriteTokens != 50 || u.APICalls != 2 {
		t.Errorf("usage %+v", u)
	}
	if res.Skipped["session.exit"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

// A line made non-JSON in the middle is one problem line; the others
// are read (the call is completed by its result all the same).
func TestDamagedLine(t *testing.T) {
	dir := importertest.CopyDir(t, root)
	path := filepath.Join(dir, "trajectory-"+id+".ndjson")
	data := importertest.ReadBytes(t, path)
	lines := splitLines(data)
	lines[5] = []byte(`{"id":"ev-06", not json`)
	importertest.WriteFile(t, path, joinLines(lines), 0o644)
	res := importertest.ReadAll(t, Format{}, dir)
	if len(res.Problems) != 1 || res.Problems[0].Line != 6 {
		t.Fatalf("problems %v", res.Problems)
	}
	s := importertest.Session(t, res, id)
	if p := s.Messages[1].Parts; len(p) != 2 || p[0].Status != loom.ToolCompleted {
		t.Errorf("reply %+v", p)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, root, 1, 2)
	importertest.ImportsAndFollows(t, Format{}, root, 1, 2, "trajectory-"+id+".ndjson",
		`{"id":"ev-14","timestamp":"2026-10-05T09:01:00.000000-04:00","type":"session.input","session_input":{"prompt":"Do it."}}`)
}

// Its places: pool's state directory on each system; $LOOM_POOLSIDE_DIR
// replaces them.
func TestRoots(t *testing.T) {
	roots := Format{}.Roots(nil, "/home/u")
	if len(roots) != 3 || roots[0] != "/home/u/.local/state/poolside" {
		t.Errorf("roots %v", roots)
	}
	if got := (Format{}).Roots(importertest.Getenv("LOOM_POOLSIDE_DIR", "/x/pool"), "/home/u"); len(got) != 1 || got[0] != "/x/pool" {
		t.Errorf("with $LOOM_POOLSIDE_DIR: %v", got)
	}
}
