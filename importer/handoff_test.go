package importer

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

// TestShellAndRead: the shell and file-read calls of every tool are
// recognised, whatever shape their input has.
func TestShellAndRead(t *testing.T) {
	for _, c := range []struct{ name, input, want string }{
		{"Bash", `{"command":"ls -la"}`, "ls -la"},
		{"shell", `{"command":["bash","-lc","go test ./..."]}`, "go test ./..."},
		{"shell", `{"command":["git","status"]}`, "git status"},
		{"exec_command", `{"cmd":"make"}`, "make"},
		{"local_shell", `{"action":{"command":["ls"]}}`, "ls"},
		{"run_shell_command", `{"command":"npm test"}`, "npm test"},
		{"bash", `{"command":"pwd"}`, "pwd"},
		{"Grep", `{"command":"x"}`, ""},
	} {
		got, ok := ShellCommand(loom.Part{Name: c.name, Input: json.RawMessage(c.input)})
		if got != c.want || ok != (c.want != "") {
			t.Errorf("ShellCommand(%s %s) = %q, %v; want %q", c.name, c.input, got, ok, c.want)
		}
	}
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
