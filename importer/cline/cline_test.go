package cline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// fixture holds sessions Cline's CLI 3.0.65 wrote, run offline against a
// fake OpenAI-compatible model (`cline auth openai --baseurl …`): a
// prompt answered with reasoning and continued in its TUI (`cline --id
// ID`, in a terminal), a file read with read_files, and a session
// left with Ctrl+C while cline still waited on its hub, which it records
// as an error shown to the user; and two TestImportRealCline wrote (its
// directories renamed /tmp/npmb/…): two turns followed by /compact in
// the TUI (<id>.compaction.json), and a spawn_agent call with the
// sub-agent's messages beside its parent's
// (agent_<id>.messages.json).
var fixture = filepath.Join("testdata", "sessions")

const (
	turnsID   = "1795589676179_a9wk5"
	readID    = "1795590774990_ygpka"
	leftID    = "1795592977707_g3zvq"
	compactID = "1795662075441_mkhlt"
	spawnID   = "1795662173245_hc03i"
	subID     = spawnID + "__agent_1795662176480_0vltj7"
)

func TestRoots(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{nil, "/home/u/.cline/data/sessions"},
		{map[string]string{EnvDir: "/c"}, "/c/data/sessions"},
		{map[string]string{EnvDir: "/c", EnvDataDir: "/d"}, "/d/sessions"},
		{map[string]string{EnvDataDir: "/d", EnvSessionDir: "/s"}, "/s"},
	} {
		if got := (Format{}).Roots(env(c.vars), "/home/u"); len(got) != 1 || got[0] != filepath.FromSlash(c.want) {
			t.Errorf("roots with %v: %v, want %s", c.vars, got, c.want)
		}
	}
}

// TestReadReal: what Cline wrote reads with each prompt (without the
// <user_input> wrapper Cline sends the model), reply, reasoning block
// and tool call once, in order, the call with its result, and each
// reply's tokens, input without the cached ones.
func TestReadReal(t *testing.T) {
	res := importertest.ReadAllValid(t, Format{}, fixture)
	if len(res.Problems) != 0 || len(res.Skipped) != 0 {
		t.Errorf("problems %v, skipped %v", res.Problems, res.Skipped)
	}
	turns := importertest.Session(t, res, turnsID)
	if turns.Title != "Say hello in one line." || turns.Cwd != "/tmp/npmb/clwork" || turns.Model != "gpt-fake" ||
		turns.Provider != "openai-compatible" || turns.Version != "3.0.65" || turns.Kind != "" {
		t.Errorf("session %+v", turns)
	}
	if got := importertest.Roles(turns); got != "user assistant user assistant" {
		t.Fatalf("roles %q", got)
	}
	var texts []string
	for _, m := range turns.Messages {
		texts = append(texts, m.Text())
	}
	if want := "Say hello in one line.|Hello there.|One more on the greeting?|Continued and answering."; strings.Join(texts, "|") != want {
		t.Errorf("texts %q", texts)
	}
	if p := turns.Messages[1].Parts[0]; p.Type != loom.PartReasoning || p.Text != "A greeting." {
		t.Errorf("reasoning %+v", p)
	}
	// The fake sent 1000 tokens in, 200 of them cached, and 15 out.
	if u := turns.Messages[1].Usage; u != (loom.Usage{InputTokens: 800, CacheReadTokens: 200, OutputTokens: 15}) {
		t.Errorf("usage %+v", u)
	}

	left := importertest.Session(t, res, leftID)
	if got := importertest.Roles(left); got != "user assistant user assistant system" ||
		!strings.Contains(left.Messages[4].Text(), "disconnected before request was resolved") {
		t.Errorf("the session left with Ctrl+C: roles %q", got)
	}

	read := importertest.Session(t, res, readID)
	call := read.Messages[1].Parts[1]
	if call.Type != loom.PartTool || call.Name != "read_files" || call.Status != loom.ToolCompleted ||
		!strings.Contains(string(call.Output), `"result":"1 | alpha\n2 | beta"`) || !strings.Contains(string(call.Input), "notes.txt") {
		t.Errorf("the read %+v", call)
	}
	if len(res.Sessions) != 6 {
		t.Errorf("%d sessions, want 6 (the sub-agent's file is no session of its own)", len(res.Sessions))
	}
}

// TestReadCompaction: /compact's summary, kept in <id>.compaction.json
// for the messages it replaces, is a summary message after the last of
// them, counted as a compaction; the messages file still holds them all.
func TestReadCompaction(t *testing.T) {
	s := importertest.SessionOf(t, Format{}, fixture, compactID, "user assistant user assistant summary")
	sum := s.Messages[4]
	if !strings.HasPrefix(sum.Text(), "## Goal\nGreet the user twice.") || sum.Usage != (loom.Usage{Compactions: 1}) ||
		sum.CreatedAt.UnixMilli() != 1795662122625 {
		t.Errorf("summary %q at %s, usage %+v", sum.Text(), sum.CreatedAt, sum.Usage)
	}
}

// TestReadSubagent: a sub-agent spawn_agent ran, whose messages cline
// keeps beside its parent's, is a sub-agent of it, under the session id
// cline gives it, linked from the call that ran it; read alone, its file
// still names its parent.
func TestReadSubagent(t *testing.T) {
	res := importertest.ReadAll(t, Format{}, fixture)
	parent, sub := importertest.Session(t, res, spawnID), importertest.Session(t, res, subID)
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != spawnID || importertest.Roles(sub) != "user assistant" ||
		sub.Messages[0].Text() != "SUBTASK-COUNT: count the lines of notes.txt" || sub.Messages[1].Usage != (loom.Usage{InputTokens: 600, OutputTokens: 7}) {
		t.Errorf("sub-agent %+v", sub)
	}
	var agents []loom.Part
	for _, m := range parent.Messages {
		for _, p := range m.Parts {
			if p.Type == loom.PartAgent {
				agents = append(agents, p)
			}
		}
	}
	if len(agents) != 1 || agents[0].SessionID != subID || agents[0].Name != "spawn_agent" {
		t.Errorf("agent parts %+v", agents)
	}

	alone := importertest.ReadFile(t, Format{}, filepath.Join(fixture, spawnID, "agent_1795662176480_0vltj7.messages.json"))
	if len(alone.Sessions) != 1 || alone.Sessions[0].SourceID != subID || alone.Sessions[0].Kind != loom.KindSubagent || alone.Sessions[0].ParentSourceID != spawnID {
		t.Errorf("the sub-agent's file alone: %+v", alone.Sessions)
	}
}

// TestStaleCompaction: a compaction whose last message is not the
// session's (the history changed under it, and cline no longer applies
// it) adds no summary, and is counted as skipped.
func TestStaleCompaction(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(fixture, compactID, compactID)
	for _, suffix := range []string{messagesSuffix, ".json", compactionSuffix} {
		data := importertest.ReadBytes(t, src+suffix)
		if suffix == compactionSuffix {
			data = []byte(strings.Replace(string(data), "id:msg_hjKpkw8W", "id:msg_other", 1))
		}
		importertest.WriteFile(t, filepath.Join(dir, compactID+suffix), data, 0o644)
	}
	res := importertest.ReadAll(t, Format{}, dir)
	if s := importertest.Session(t, res, compactID); importertest.Roles(s) != "user assistant user assistant" || res.Skipped["compaction:stale"] != 1 {
		t.Errorf("roles %q, skipped %v", importertest.Roles(s), res.Skipped)
	}
}

// TestMalformed: a messages file that is not JSON is a problem of its
// own; a message that cannot be read, a tool_result for no call, a role
// or block this reader does not know are problems or skipped, and the
// rest is read; a sub-agent's record links it to its parent.
func TestMalformed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		importertest.WriteFile(t, path, []byte(data), 0o644)
		return path
	}
	bad := write("b.messages.json", "{not json")
	res, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{bad}})
	if err != nil || len(res.Problems) != 1 || len(res.Sessions) != 0 {
		t.Errorf("not JSON: %v, %+v", err, res)
	}
	msgs := write("s.messages.json", `{"messages": [
		5,
		{"id": "u", "role": "user", "content": "plain text", "ts": 1795589678968},
		{"id": "a", "role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "run_commands", "input": {}}, {"type": "image"}]},
		{"id": "r", "role": "user", "content": [{"type": "tool_result", "tool_use_id": "other", "content": "x"}]},
		{"id": "t", "role": "tool", "content": []},
		{"id": "error_1", "role": "assistant", "content": [{"type": "text", "text": "Capability owner client disconnected before request was resolved."}], "metadata": {"displayOnly": true, "displayRole": "error"}}]}`)
	rec := write("s.json", `{"session_id": "s", "parent_session_id": "p", "is_subagent": true, "metadata": {"title": "A sub-agent"}}`)
	res, err = (Format{}).Read(context.Background(), importer.Bundle{Files: []string{msgs, rec}})
	if err != nil {
		t.Fatal(err)
	}
	importertest.CheckValidOf(t, Tool, res)
	if len(res.Problems) != 2 || res.Skipped["block:image"] != 1 || res.Skipped["role:tool"] != 1 {
		t.Errorf("problems %v, skipped %v", res.Problems, res.Skipped)
	}
	s := res.Sessions[0]
	if s.Kind != loom.KindSubagent || s.ParentSourceID != "p" || s.Title != "A sub-agent" || importertest.Roles(s) != "user assistant system" {
		t.Errorf("session %+v", s)
	}
}
