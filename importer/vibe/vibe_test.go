package vibe

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	logs     = filepath.Join("testdata", "session")
	dir      = filepath.Join(logs, "session_20260305_101500_a1b2c3d4")
	messages = filepath.Join(dir, messagesFile)
	sid      = "a1b2c3d4-0000-4000-8000-000000000001"
)

// A Vibe session: the system prompt and the injected context as system
// messages, reasoning, a call completed by its tool message; meta.json's
// id, title, directory, branch and model; its totals on the last reply.
func TestRead(t *testing.T) {
	_, s := importertest.ReadValidFor(t, Format{}, logs, sid)
	if got := importertest.Roles(s); got != "system user assistant system assistant" {
		t.Fatalf("roles %s", got)
	}
	if s.Title != "List the Python files" || s.Cwd != "/home/u/pyproj" || s.GitBranch != "main" || s.Model != "devstral-medium" {
		t.Errorf("session %+v", s)
	}
	r := s.Messages[2]
	if r.Parts[0].Type != loom.PartReasoning || r.Parts[1].Name != "bash" || r.Parts[1].Status != loom.ToolCompleted || string(r.Parts[1].Input) != `{"command":"ls *.py"}` {
		t.Errorf("call %+v", r.Parts)
	}
	if u := s.Messages[4].Usage; u.InputTokens != 2000 || u.CacheReadTokens != 1000 || u.OutputTokens != 80 || u.APICalls != 2 {
		t.Errorf("usage %+v", u)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollows(t, Format{}, logs, 2, 10, filepath.Join(filepath.Base(dir), messagesFile),
		`{"role":"user","content":"Thanks."}`)
	importertest.Malformed(t, Format{}, messages, "session_x/messages.jsonl")
}

// Vibe counts a step for each user message and each compaction as well
// as for each model call (vibe/core/agent_loop.py of
// mistralai/mistral-vibe at ac8f1a09fdfbadb6d4508a555ba6607fd05eb0dc):
// a session of two prompts and three calls, steps 5 in meta.json as
// that source writes it, made three calls.
func TestStepsAreNotCalls(t *testing.T) {
	_, s := importertest.ReadAllFor(t, Format{}, logs, "b2c3d4e5-0000-4000-8000-000000000002")
	var u loom.Usage
	for _, m := range s.Messages {
		u.Add(m.Usage)
	}
	if u.APICalls != 3 || u.InputTokens != 4200 || u.OutputTokens != 90 {
		t.Errorf("usage %+v, want 3 calls", u)
	}
}

// Vibe's compact() starts a new session that continues the old one
// (parent_session_id) and keeps the running totals: stats are reset only
// by clear_history (vibe/core/agent_loop.py at ac8f1a09). The continued
// session's own usage is its totals less its parent's, so the two
// sessions together book what Vibe's last meta.json says: 4 calls
// (the compaction's among them), 4,400 input and 120 output tokens.
func TestCompactionCountsUsageOnce(t *testing.T) {
	root := filepath.Join("testdata", "compacted")
	res := importertest.ReadAllValid(t, Format{}, root)
	var total loom.Usage
	for _, s := range res.Sessions {
		for _, m := range s.Messages {
			total.Add(m.Usage)
		}
	}
	if total.APICalls != 4 || total.InputTokens != 4400 || total.OutputTokens != 120 {
		t.Errorf("usage of both sessions %+v, want 4 calls, 4400 in, 120 out", total)
	}
	c := importertest.Session(t, res, "d4e5f6a7-2222-4000-8000-00000000aa03")
	if c.ParentSourceID != "c3d4e5f6-1111-4000-8000-00000000aa03" {
		t.Errorf("continued session's parent %q", c.ParentSourceID)
	}
	// Read alone, as a watch reads a file that changed, the session
	// still finds its parent's totals.
	one := importertest.ReadAll(t, Format{}, filepath.Join(root, "session_20260710_091500_d4e5f6a7", messagesFile))
	var u loom.Usage
	for _, m := range importertest.Session(t, one, c.SourceID).Messages {
		u.Add(m.Usage)
	}
	if u.APICalls != 2 || u.InputTokens != 2400 || u.OutputTokens != 70 {
		t.Errorf("continued session's own usage %+v, want 2 calls, 2400 in, 70 out", u)
	}
	// The parent's meta.json is its own session's file, not read again
	// by a second import.
	st := importertest.Store(t)
	importertest.Import(t, st, Format{}, root)
	if r := importertest.Import(t, st, Format{}, root); r.FilesRead != 0 {
		t.Errorf("a second import read %d files again", r.FilesRead)
	}
}

// Before 2.15.0 compact() opened the session it started otherwise
// (vibe/core/agent_loop.py of mistralai/mistral-vibe at v2.11.0 and
// v2.11.1): before 2.11.1 with the summary alone as a user message,
// from 2.11.1 to 2.14.1 with the last prompts and then the summary
// opened by compact_summary_prefix.md, all user messages not injected.
// Such a session is a compaction's all the same: it books its totals
// less its parent's, once, and its opening is what the agent was told
// (system messages), not prompts. A fork of the same parent, which
// opens with its parent's first prompt, keeps its own totals.
func TestEarlierCompactionCountsUsageOnce(t *testing.T) {
	for _, c := range []struct{ dir, parent, child, roles string }{
		{"compacted-2.11.0", "e5f6a7b8-1111-4000-8000-00000000bb03", "f6a7b8c9-2222-4000-8000-00000000bb03", "system system user assistant"},
		{"compacted-2.14.1", "b8c9d0e1-1111-4000-8000-00000000cc03", "c9d0e1f2-2222-4000-8000-00000000cc03", "system system system user assistant"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			res := importertest.ReadAllValid(t, Format{}, filepath.Join("testdata", c.dir))
			var total loom.Usage
			for _, id := range []string{c.parent, c.child} {
				for _, m := range importertest.Session(t, res, id).Messages {
					total.Add(m.Usage)
				}
			}
			if total.APICalls != 4 || total.InputTokens != 4400 || total.OutputTokens != 120 {
				t.Errorf("usage of both sessions %+v, want 4 calls, 4400 in, 120 out", total)
			}
			s := importertest.Session(t, res, c.child)
			if s.ParentSourceID != c.parent || importertest.Roles(s) != c.roles {
				t.Errorf("continued session of %q: %s", s.ParentSourceID, importertest.Roles(s))
			}
			importertest.CheckTexts(t, s, loom.RoleUser, "Run it.")
		})
	}
	res := importertest.ReadAllValid(t, Format{}, filepath.Join("testdata", "compacted-2.11.0"))
	f := importertest.Session(t, res, "a7b8c9d0-3333-4000-8000-00000000bb03")
	var u loom.Usage
	for _, m := range f.Messages {
		u.Add(m.Usage)
	}
	if f.Kind != loom.KindFork || u.InputTokens != 2600 || u.OutputTokens != 60 || importertest.Roles(f) != "system user assistant assistant user assistant" {
		t.Errorf("fork %s %+v %s", f.Kind, u, importertest.Roles(f))
	}
}
