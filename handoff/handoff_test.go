package handoff

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// TestEntries: the shared mapping of a handoff keeps prompts, replies,
// reasoning and tool calls, gives an unfinished call an "interrupted"
// result, leads a summary with SummaryLead, merges messages of one role
// in a row, and counts what it leaves out.
func TestEntries(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	text := func(s string) loom.Part { return loom.Part{Type: loom.PartText, Text: s} }
	h := &Handoff{Session: &loom.Session{ID: "s"}, Now: at, Messages: []*loom.Message{
		{Role: loom.RoleSystem, Parts: []loom.Part{text("injected")}},
		{Role: loom.RoleUser, Turn: 1, Parts: []loom.Part{text("fix it"), {Type: loom.PartFile, Filename: "a.go"}}},
		{Role: loom.RoleAssistant, Turn: 1, Parts: []loom.Part{{Type: loom.PartStepStart}, {Type: loom.PartReasoning, Text: "hm"}, text("on it"),
			{Type: loom.PartTool, CallID: "c1", Name: "shell", Status: loom.ToolRunning, Input: json.RawMessage(`{"cmd":"go test"}`)}}},
		{Role: loom.RoleAssistant, Turn: 1, Error: &loom.MessageError{Message: "rate limited"}},
		{Role: loom.RoleAssistant, Turn: 1, Parts: []loom.Part{{Type: loom.PartAgent, Name: "explore"}, text("done")}},
		{Role: loom.RoleSummary, Turn: 1, Parts: []loom.Part{text("we fixed it")}},
		{Role: loom.RoleUser, Turn: 2, Parts: []loom.Part{text("thanks"), text("  ")}},
	}}
	out := &Handed{}
	got := Entries(h, out)
	want := []Entry{
		{Role: loom.RoleUser, At: at, Parts: []loom.Part{text("fix it")}},
		{Role: loom.RoleAssistant, At: at, Parts: []loom.Part{{Type: loom.PartReasoning, Text: "hm"}, text("on it"),
			{Type: loom.PartTool, CallID: "c1", Name: "shell", Status: loom.ToolError, Error: loom.Interrupted, Input: json.RawMessage(`{"cmd":"go test"}`)}, text("done")}},
		{Role: loom.RoleUser, Summary: true, At: at, Parts: []loom.Part{text(SummaryLead + "we fixed it"), text("thanks")}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Entries =\n%+v\nwant\n%+v", got, want)
	}
	if d := map[string]int{"system": 1, "file": 1, "agent": 1, "error": 1}; !reflect.DeepEqual(out.Dropped, d) || out.Messages != 5 {
		t.Errorf("dropped %v, %d messages; want %v, 5", out.Dropped, out.Messages, d)
	}
	if o := h.Origin(); o.SessionID != "s" || o.Turn != 2 {
		t.Errorf("origin %+v", o)
	}
}

// TestShellAndRead: the file-read calls of every tool are recognised,
// whatever shape their input has (the shell calls' are package
// internal/shell's, TestCommand).
func TestShellAndRead(t *testing.T) {
	for _, c := range []struct{ name, input, want string }{
		{"Read", `{"file_path":"/a/b.go"}`, "/a/b.go"},
		{"read_file", `{"path":"b.go"}`, "b.go"},
		{"read", `{"filePath":"c.go"}`, "c.go"},
		{"Write", `{"file_path":"d.go"}`, ""},
	} {
		got, ok := ReadPath(loom.Part{Name: c.name, Input: json.RawMessage(c.input)})
		if got != c.want || ok != (c.want != "") {
			t.Errorf("ReadPath(%s %s) = %q, %v; want %q", c.name, c.input, got, ok, c.want)
		}
	}
	ids := CallIDs{Prefix: "x"}
	if a, b, c := ids.For(loom.Part{CallID: "call_1"}), ids.For(loom.Part{CallID: "call_1"}), ids.For(loom.Part{CallID: "a/b"}); a != "call_1" || b != "x0002" || c != "x0003" {
		t.Errorf("call ids %s %s %s", a, b, c)
	}
}

// TestClaudeSummaryToOtherTools: Claude Code's compaction summary goes to
// another tool without the lines for Claude Code alone (its system
// reminder of the tools used, the path of its transcript, how to
// resume), and to Claude Code as it was.
func TestClaudeSummaryToOtherTools(t *testing.T) {
	const summary = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n" +
		"Summary:\n1. Primary Request: fix the retry policy.\n\n" +
		"If you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: /home/dev/.claude/projects/-home-dev-api/5f0c1d2e.jsonl\n" +
		"Continue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening.\n\n" +
		"<system-reminder>\n<tools-used-before-summary>Bash, Read</tools-used-before-summary>\n</system-reminder>"
	h := &Handoff{Session: &loom.Session{ID: "s", Source: &loom.Source{Tool: "claude-code"}}, Messages: []*loom.Message{
		{Role: loom.RoleSummary, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: summary}}},
	}}
	got := Entries(h, &Handed{Tool: "codex"})[0].Parts[0].Text
	want := SummaryLead + "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n" +
		"Summary:\n1. Primary Request: fix the retry policy.\n\n" +
		"Continue the conversation from where it left off without asking the user any further questions."
	if got != want {
		t.Errorf("to codex:\n%s\nwant\n%s", got, want)
	}
	if got := Entries(h, &Handed{Tool: "claude-code"})[0].Parts[0].Text; got != SummaryLead+summary {
		t.Errorf("to claude-code:\n%s", got)
	}
}
