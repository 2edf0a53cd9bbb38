package codex

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
)

// TestHandoffCodexTools: a session imported from Codex goes back with
// Codex's own calls in their own shapes, arguments and all (a custom
// tool's as a custom_tool_call), its older shell calls as exec_command,
// the one shell tool Codex 0.169 offers; loom's own session has a shell
// command of any tool as Codex's exec_command call and the tools Codex
// lacks as text; the rollout names no model provider.
func TestHandoffCodexTools(t *testing.T) {
	home := t.TempDir()
	call := func(id, name, input string) loom.Part {
		return loom.Part{Type: loom.PartTool, CallID: id, Name: name, Status: loom.ToolCompleted, Input: json.RawMessage(input), Output: json.RawMessage(`"ok"`)}
	}
	h := &handoff.Handoff{
		Session: &loom.Session{ID: "s", Source: &loom.Source{Tool: Tool}},
		Dir:     home, Home: home,
		Messages: []*loom.Message{
			{Role: loom.RoleUser, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: "patch it"}}},
			{Role: loom.RoleAssistant, Turn: 1, Parts: []loom.Part{
				call("c1", "apply_patch", `{"input":"*** Begin Patch"}`),
				call("c2", "shell", `{"command":["bash","-lc","go vet"],"workdir":"/src/api"}`),
				call("c3", "update_plan", `{"plan":[]}`),
			}},
		},
	}
	out, err := Format{}.Handoff(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"type":"custom_tool_call"`, `"input":"*** Begin Patch"`,
		`"name":"exec_command"`, `{\"cmd\":\"go vet\",\"workdir\":\"/src/api\"}`,
		`"output":"Process exited with code 0\nOutput:\nok"`,
		`"name":"update_plan"`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the rollout lacks %s:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), "model_provider") || strings.Contains(string(data), `"name":"shell"`) || out.ToolCalls != 3 || out.ToolRecords != 0 {
		t.Errorf("%d calls, %d records:\n%s", out.ToolCalls, out.ToolRecords, data)
	}
	// Codex's own exec_command output keeps the header it has.
	h.Messages[1].Parts = []loom.Part{call("c4", "exec_command", `{"cmd":"ls"}`)}
	h.Messages[1].Parts[0].Output = json.RawMessage(`"Chunk ID: 7e3a90\nWall time: 0.0101 seconds\nProcess exited with code 0\nOutput:\na.go\n"`)
	out, err = Format{}.Handoff(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ = os.ReadFile(out.Path); strings.Count(string(data), "Process exited with code") != 1 {
		t.Errorf("exec_command's own output:\n%s", data)
	}
	h.Session.Source = nil // loom's own session: update_plan is no tool of Codex's it knows
	h.Messages[1].Parts = []loom.Part{call("c1", "apply_patch", `{"input":"*** Begin Patch"}`), call("c2", "run_shell_command", `{"command":"go vet"}`), call("c3", "update_plan", `{"plan":[]}`)}
	if out, err = (Format{}).Handoff(context.Background(), h); err != nil || out.ToolRecords != 2 || out.ToolCalls != 1 {
		t.Errorf("loom's session: %+v, %v; want apply_patch and update_plan as text, the shell command as a call", out, err)
	}
}
