package droid

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// fixture holds sessions droid 0.215.0 wrote, run offline with `droid
// exec` against a fake OpenAI-compatible model (a custom model of
// ~/.factory/settings.json): a prompt answered with reasoning, a file
// read, and a session started on stream-json input that ended before
// its first prompt; and one TestImportRealDroid's run of droid 0.215.0
// wrote (its work directory renamed /tmp/npmb/dcompact), a file read
// whose call reported more tokens than the settings' compactionTokenLimit
// of 5000, so that droid compacted before answering the result.
const fixture = "testdata"

const (
	plainID   = "82240ba9-d3a0-4a6b-9ab0-ca733fd959e7"
	readID    = "f68ec026-c6d5-4d4d-a963-119e9e46ef04"
	emptyID   = "022dc6a6-9511-417d-bc15-686a8bef0a3c"
	compactID = "ec26efc8-a9ea-4d92-893a-4e4c989f1bab"
)

func TestRoots(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	if got := (Format{}).Roots(env(""), "/home/u"); len(got) != 1 || got[0] != filepath.FromSlash("/home/u/.factory/sessions") {
		t.Errorf("roots %v", got)
	}
	if got := (Format{}).Roots(env("/elsewhere"), "/home/u"); len(got) != 1 || got[0] != filepath.FromSlash("/elsewhere/.factory/sessions") {
		t.Errorf("roots with %s: %v", EnvHome, got)
	}
}

// TestReadReal: what droid wrote reads with each prompt, reply,
// reasoning block and tool call once, in order, the call with its
// result, and the session's token totals on its last reply; the context
// droid adds before a prompt is no prompt.
func TestReadReal(t *testing.T) {
	res := importertest.ReadAllValid(t, Format{}, fixture)
	if len(res.Problems) != 0 {
		t.Errorf("problems %v", res.Problems)
	}
	if res.Skipped["context"] != 3 || res.Skipped["empty-session"] != 1 || res.Skipped["agent_turn_outcome"] != 3 {
		t.Errorf("skipped %v", res.Skipped)
	}
	if len(res.Sessions) != 3 {
		t.Fatalf("%d sessions, want 3", len(res.Sessions))
	}
	plain := importertest.Session(t, res, plainID)
	if plain.Title != "Say hello in one line." || plain.Cwd != "/tmp/npmb/dwork" || plain.Model != "custom:Fake-0" {
		t.Errorf("plain: title %q, cwd %q, model %q", plain.Title, plain.Cwd, plain.Model)
	}
	if got := importertest.Roles(plain); got != "user assistant" {
		t.Errorf("plain roles %q", got)
	}
	reply := plain.Messages[1]
	if len(reply.Parts) != 2 || reply.Parts[0].Type != loom.PartReasoning || reply.Parts[0].Text != "A greeting." || reply.Parts[1].Text != "Hello there." {
		t.Errorf("plain reply %+v", reply.Parts)
	}
	// The fake sent 1000 tokens in, 200 of them cached, and 15 out.
	if want := (loom.Usage{InputTokens: 800, CacheReadTokens: 200, OutputTokens: 15, APICalls: 1}); reply.Usage != want {
		t.Errorf("plain usage %+v, want %+v", reply.Usage, want)
	}

	read := importertest.Session(t, res, readID)
	if got := importertest.Roles(read); got != "user assistant assistant" {
		t.Errorf("read roles %q", got)
	}
	call := read.Messages[1].Parts[1]
	if call.Type != loom.PartTool || call.Name != "Read" || call.Status != loom.ToolCompleted || string(call.Output) != `"alpha\nbeta\n"` ||
		!strings.Contains(string(call.Input), "notes.txt") {
		t.Errorf("the read %+v", call)
	}
	if read.Messages[1].Usage != (loom.Usage{}) || read.Messages[2].Usage != (loom.Usage{InputTokens: 1300 + 1400, OutputTokens: 40 + 9, APICalls: 2}) {
		t.Errorf("read usage %+v, %+v", read.Messages[1].Usage, read.Messages[2].Usage)
	}
}

// TestReadCompaction: a compaction droid made in the middle of a turn
// (its compaction_state line, after the tool's result) is a summary
// message with the model's summary where the line stands, counted as a
// compaction; the session's totals, which count the summary's model
// call, are three calls.
func TestReadCompaction(t *testing.T) {
	s := importertest.SessionOf(t, Format{}, fixture, compactID, "user assistant summary assistant")
	sum := s.Messages[2]
	if sum.Text() != "A big turn read notes.txt." || sum.Usage != (loom.Usage{Compactions: 1}) {
		t.Errorf("summary %q, usage %+v", sum.Text(), sum.Usage)
	}
	if s.Messages[1].Parts[1].Status != loom.ToolCompleted || s.Messages[3].Text() != "Done after the summary." {
		t.Errorf("the turn around the summary: %+v, %q", s.Messages[1].Parts, s.Messages[3].Text())
	}
	// The fake answered 6000 in and 10 out for the read, 1900 and 30 for
	// the summary, 2000 and 6 for the answer.
	if want := (loom.Usage{InputTokens: 6000 + 1900 + 2000, OutputTokens: 10 + 30 + 6, APICalls: 3}); s.Messages[3].Usage != want {
		t.Errorf("usage %+v, want %+v", s.Messages[3].Usage, want)
	}
}

// TestMalformed: bad lines are problems with their line numbers, and
// the rest of the file is read; a file with no session_start is not
// droid's; a tool call left without a result stays running, for the
// importer to mark.
func TestMalformed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := `{"type":"session_start","id":"s1","title":"New Session","cwd":"/w"}
{"type":"message","id":"u1","message":{"role":"user","content":"hi"}}
{"type":"message","id":"a1","message":{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"Execute","input":{"command":"ls"}},{"type":"mystery"}]}}
{"type":"message","id":"r1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"nope","content":"x"}]}}
{"type":"message","id":"a2","message":{"role":"tool","content":[]}}
{"type":"message","id":"a3","message":{"role":"assistant","content":5}}
not json
`
	importertest.WriteFile(t, path, []byte(data), 0o644)
	res := importertest.ReadFile(t, Format{}, path)
	if len(res.Problems) != 3 || res.Problems[0].Line != 4 || res.Problems[1].Line != 6 || res.Problems[2].Line != 7 {
		t.Errorf("problems %v", res.Problems)
	}
	if res.Skipped["block:mystery"] != 1 || res.Skipped["role:tool"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	s := res.Sessions[0]
	if s.Title != "" || importertest.Roles(s) != "user assistant" || s.Messages[1].Parts[0].Status != loom.ToolRunning {
		t.Errorf("session %+v", s)
	}

	importertest.WriteFile(t, path, []byte(`{"type":"message"}`+"\n"), 0o644)
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{path}}); err == nil || !strings.Contains(err.Error(), "not a droid session file") {
		t.Errorf("no session_start: %v", err)
	}
}
