package cline

import (
	"context"
	"os"
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
// as an error shown to the user.
var fixture = filepath.Join("testdata", "sessions")

const (
	turnsID = "1795589676179_a9wk5"
	readID  = "1795590774990_ygpka"
	leftID  = "1795592977707_g3zvq"
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
	res := importertest.ReadAll(t, Format{}, fixture)
	importertest.CheckValidOf(t, Tool, res)
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
}

// TestMalformed: a messages file that is not JSON is a problem of its
// own; a message that cannot be read, a tool_result for no call, a role
// or block this reader does not know are problems or skipped, and the
// rest is read; a sub-agent's record links it to its parent.
func TestMalformed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
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
