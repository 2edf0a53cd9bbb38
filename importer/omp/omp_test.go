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
	res, s := importertest.ReadValidFor(t, Format{}, sessions, "omp-main")
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
	importertest.ImportsAndFollows(t, Format{}, sessions, 2, 5, filepath.Join("--home-u-proj--", filepath.Base(mainFile)),
		`{"type":"message","id":"u2","parentId":"a2","timestamp":"2026-03-01T10:01:00.000Z","message":{"role":"user","content":"Thanks"}}`)
	importertest.Malformed(t, Format{}, mainFile, "s.jsonl")
}

func TestRoots(t *testing.T) {
	home := filepath.FromSlash("/home/u")
	if got := (Format{}).Roots(nil, home); !slices.Equal(got, []string{filepath.Join(home, ".omp", "agent", "sessions")}) {
		t.Errorf("roots %v", got)
	}
}

// testdata/real is what Oh My Pi 18.2.3 wrote (run offline against a
// fake model, as TestImportRealOhMyPi in cli/session runs it; the home
// directory renamed /home/u): a session of two turns with reasoning
// and cached tokens, and one that reads a file. omp 18 writes a title
// entry as each file's first line, before the session header: it is
// no problem, and the title is the session's.
func TestReadReal(t *testing.T) {
	res := importertest.ReadAll(t, Format{}, filepath.Join("testdata", "real"))
	importertest.CheckValidOf(t, Tool, res)
	if len(res.Problems) != 0 || len(res.Sessions) != 2 {
		t.Fatalf("%d sessions, problems %v", len(res.Sessions), res.Problems)
	}
	s := importertest.Session(t, res, "01a2182d-38bc-7376-9685-409bcbd74211")
	var u loom.Usage
	for _, m := range s.Messages {
		u.Add(m.Usage)
	}
	if importertest.Roles(s) != "user assistant user assistant" || u.ReasoningTokens != 5 || u.CacheReadTokens != 200 || u.APICalls != 2 {
		t.Errorf("session %s, usage %+v", importertest.Roles(s), u)
	}
	if res.Skipped["title"] != 2 {
		t.Errorf("skipped %v, want the two title entries", res.Skipped)
	}
}

// omp 18.2.3 writes a task's sub-agent as <session>/<name>.jsonl (its
// task tool's artifacts directory, task/executor.ts), whose header names
// the parent's file as parentSession (session/session-manager.ts): it is
// a sub-agent of that session, not a fork, and the task call that ran
// it has an agent part naming it. The files are built to omp 18.2.3's
// source as npm ships it.
func TestSubagentOfParentSession(t *testing.T) {
	res := importertest.ReadAll(t, Format{}, filepath.Join("testdata", "subagent"))
	importertest.CheckValidOf(t, Tool, res)
	if len(res.Problems) != 0 {
		t.Errorf("problems %v", res.Problems)
	}
	parent := "01a2182d-5000-7000-8000-0000000000a1"
	sub := importertest.Session(t, res, "01a2182d-5100-7000-8000-0000000000b2")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != parent {
		t.Errorf("sub-agent %s of %q, want a sub-agent of %s", sub.Kind, sub.ParentSourceID, parent)
	}
	s := importertest.Session(t, res, parent)
	var agent *loom.Part
	for _, p := range s.Messages[1].Parts {
		if p.Type == loom.PartAgent {
			agent = &p
		}
	}
	if agent == nil || agent.SessionID != sub.SourceID || agent.Name != "task" {
		t.Errorf("task call's parts %+v, want an agent part naming the sub-agent", s.Messages[1].Parts)
	}
}
