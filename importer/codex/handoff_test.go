package codex

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer/importertest"
)

// TestHandoffCodexTools: a handed-off rollout calls only the tools the
// model Codex resumes with is offered, which a model in code mode (the
// default's, one of Codex's catalog that has it, any under
// features.code_mode_only) is offered exec and wait, another
// exec_command: a shell command is an exec script that runs
// exec_command, else an exec_command call (the directory it ran in
// kept); a session imported from Codex keeps its own calls of the tools
// offered as they were, and its other calls (update_plan, apply_patch,
// which Codex 0.169 offers neither) are told as text; the rollout names
// no model provider.
func TestHandoffCodexTools(t *testing.T) {
	call := func(id, name, input string) loom.Part {
		return loom.Part{Type: loom.PartTool, CallID: id, Name: name, Status: loom.ToolCompleted, Input: json.RawMessage(input), Output: json.RawMessage(`"ok"`)}
	}
	const script = "const r = await tools.exec_command({\\\"cmd\\\":\\\"go vet\\\",\\\"workdir\\\":\\\"/src/api\\\"});"
	for _, c := range []struct {
		name, config string
		want, not    []string
		calls        int
	}{
		{"default model", "", []string{script, `"input":"text(1)","name":"exec"`, `"name":"wait"`},
			[]string{`"exec_command","arguments"`, `"name":"view_image"`}, 3},
		{"a code-mode model", `model = "gpt-5.6-terra-2026"`, []string{script}, []string{`"exec_command","arguments"`}, 3},
		{"code_mode_only", "model = \"gpt-5.5\"\n[features]\ncode_mode_only = true", []string{script}, []string{`"exec_command","arguments"`}, 3},
		{"gpt-5.5", `model = "gpt-5.5"`, []string{`"name":"exec_command"`, `{\"cmd\":\"go vet\",\"workdir\":\"/src/api\"}`, `"name":"view_image"`},
			[]string{`"name":"exec"`, `"name":"wait"`}, 2},
		{"a profile's model", "model = \"gpt-6.1-sol\"\nprofile = \"local\"\n[profiles.local]\nmodel = \"qwen3-coder\"", []string{`"name":"exec_command"`}, []string{`"name":"exec"`}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			if err := os.MkdirAll(home+"/.codex", 0o700); err != nil {
				t.Fatal(err)
			}
			importertest.WriteFile(t, home+"/.codex/config.toml", []byte(c.config+"\n"), 0o600)
			h := &handoff.Handoff{
				Session: &loom.Session{ID: "s", Source: &loom.Source{Tool: Tool}},
				Dir:     home, Home: home,
				Messages: []*loom.Message{
					{Role: loom.RoleUser, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: "patch it"}}},
					{Role: loom.RoleAssistant, Turn: 1, Parts: []loom.Part{
						call("c1", "apply_patch", `{"input":"*** Begin Patch"}`),
						call("c2", "shell", `{"command":["bash","-lc","go vet"],"workdir":"/src/api"}`),
						call("c3", "update_plan", `{"plan":[]}`),
						call("c4", "exec", `{"input":"text(1)"}`),
						call("c5", "wait", `{"cell_id":"1"}`),
						call("c6", "view_image", `{"path":"/a.png"}`),
					}},
				},
			}
			out := importertest.HandOff(t, Format{}, h)
			data := importertest.ReadBytes(t, out.Path)
			for _, want := range append(c.want, `"output":"Process exited with code 0\nOutput:\nok"`, "[Tool call update_plan", "[Tool call apply_patch") {
				if !strings.Contains(string(data), want) {
					t.Errorf("the rollout lacks %s:\n%s", want, data)
				}
			}
			for _, not := range append(c.not, "model_provider", `"name":"shell"`, `"name":"update_plan"`, `"name":"apply_patch"`) {
				if strings.Contains(string(data), not) {
					t.Errorf("the rollout has %s:\n%s", not, data)
				}
			}
			if out.ToolCalls != c.calls || out.ToolRecords != 6-c.calls {
				t.Errorf("%d calls, %d records; want %d calls", out.ToolCalls, out.ToolRecords, c.calls)
			}
		})
	}
	home := t.TempDir()
	h := &handoff.Handoff{
		Session: &loom.Session{ID: "s", Source: &loom.Source{Tool: Tool}},
		Dir:     home, Home: home,
		Messages: []*loom.Message{
			{Role: loom.RoleUser, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: "patch it"}}},
			{Role: loom.RoleAssistant, Turn: 1},
		},
	}
	// Codex's own exec_command output keeps the header it has, its
	// arguments all of theirs.
	h.Messages[1].Parts = []loom.Part{call("c4", "exec_command", `{"cmd":"ls","yield_time_ms":500}`)}
	h.Messages[1].Parts[0].Output = json.RawMessage(`"Chunk ID: 7e3a90\nWall time: 0.0101 seconds\nProcess exited with code 0\nOutput:\na.go\n"`)
	out := importertest.HandOff(t, Format{}, h)
	if data, _ := os.ReadFile(out.Path); !strings.Contains(string(data), `"output":"Chunk ID: 7e3a90\nWall`) || !strings.Contains(string(data), `yield_time_ms\":500`) {
		t.Errorf("exec_command's own call:\n%s", data)
	}
	h.Session.Source = nil // loom's own session: update_plan is no tool of Codex's it knows
	h.Messages[1].Parts = []loom.Part{call("c1", "apply_patch", `{"input":"*** Begin Patch"}`), call("c2", "run_shell_command", `{"command":"go vet"}`), call("c3", "update_plan", `{"plan":[]}`)}
	if out, err := (Format{}).Handoff(context.Background(), h); err != nil || out.ToolRecords != 2 || out.ToolCalls != 1 {
		t.Errorf("loom's session: %+v, %v; want apply_patch and update_plan as text, the shell command as a call", out, err)
	}
}
