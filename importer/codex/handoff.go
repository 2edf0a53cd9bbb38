package codex

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/shell"
)

var _ handoff.Writer = Format{}

// handoffOriginator is the program a handed-off rollout says started it.
const handoffOriginator = "loom_handoff"

// Handoff writes h as a new Codex rollout,
// sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl under $CODEX_HOME or
// ~/.codex: session_meta first (recording the loom session in
// loom_handoff), then the conversation as response items, with the
// user_message and agent_message events Codex's session list reads.
// Shell commands become calls of the shell tool that the model Codex
// resumes with is offered (see codeMode): an exec script that runs
// exec_command, else an exec_command call; a session imported from
// Codex keeps its own calls of the tools that model is offered, as
// they were. Any other tool call (Codex has no tool that reads a file
// or searches sessions, and the model would be refused a call of a
// tool it is not offered) is told as text. Reasoning is dropped: Codex
// sends back only the reasoning items the Responses API gave it,
// encrypted. The meta names no model provider: Codex refuses to resume
// a session under another provider than the one it names, and the
// session should go on with whichever the user has configured. Where
// Codex keeps a thread database, the rollout is registered in it
// (registerThread), so that `codex resume --last` finds it.
func (Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	dir, err := importer.HandoffDir(Tool, h, "CODEX_HOME", ".codex")
	if err != nil {
		return nil, err
	}
	u, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("codex: %w", err)
	}
	id := h.SessionID(u.String)
	now := h.Time()
	out := &handoff.Handed{Tool: Tool, SessionID: id,
		Path: filepath.Join(dir, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"),
			"rollout-"+now.Format("2006-01-02T15-04-05")+"-"+id+".jsonl"),
		Resume: handoff.ResumeIn(h.Dir, "codex", "resume", id)}
	// Written back: in the rollout file it was in, which Codex finds by
	// the id its name ends with.
	if p := h.KeptPath(func(p string) bool { return strings.HasSuffix(filepath.Base(p), "-"+id+".jsonl") }); p != "" {
		out.Path = p
	}
	meta := map[string]any{
		"id": id, "timestamp": handoff.Stamp(now), "cwd": h.Dir, "originator": handoffOriginator,
		"cli_version": "0.0.0", "instructions": nil, "source": "cli",
		handoff.OriginFieldSnake: h.Origin(),
	}
	if h.Session.GitBranch != "" {
		meta["git"] = map[string]any{"branch": h.Session.GitBranch}
	}
	w := &cxWriter{}
	w.add(now, "session_meta", meta)
	ids := handoff.CallIDs{Prefix: "call_loom"}
	tools := cxTools{code: codeMode(readConfig(dir)), own: h.FromTool(Tool)}
	for _, e := range handoff.Entries(h, out) {
		at := e.At
		if e.Role == loom.RoleUser {
			text := joinText(e.Parts)
			if w.prompt == "" || w.summaryFirst && !e.Summary {
				// The first prompt, else the summary the session starts
				// with.
				w.prompt, w.summaryFirst = text, e.Summary
			}
			w.add(at, "response_item", map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}})
			w.add(at, "event_msg", map[string]any{"type": "user_message", "message": text, "images": []any{}})
			continue
		}
		for _, p := range e.Parts {
			switch p.Type {
			case loom.PartReasoning:
				out.Drop("reasoning")
			case loom.PartText:
				w.assistantText(at, p.Text)
			case loom.PartTool:
				c, ok := tools.call(p)
				if !ok {
					out.ToolRecords++
					w.assistantText(at, handoff.ToolRecord(p))
					continue
				}
				out.ToolCalls++
				w.call(at, ids.For(p), c, p)
			}
		}
	}
	if err := handoff.WriteLines(ctx, out.Path, w.lines); err != nil {
		return nil, err
	}
	// Best effort: the rollout is resumable by its id whatever becomes
	// of this; only `codex resume --last` needs it.
	_ = registerThread(ctx, dir, thread{id: id, path: out.Path, cwd: h.Dir, prompt: w.prompt, branch: h.Session.GitBranch, created: now, updated: time.Now()})
	return out, nil
}

// Codex's tools that a handed-off rollout calls.
const (
	// execCommand runs a shell command; the models Codex runs without
	// code mode are offered it.
	execCommand = "exec_command"
	// execTool runs a JavaScript script that calls Codex's other tools
	// (tools.exec_command …), and waitTool waits for one still running:
	// the only two a model in code mode is offered of them.
	execTool = "exec"
	waitTool = "wait"
)

// defaultModel is the model Codex 0.169 runs when its config.toml names
// none.
const defaultModel = "gpt-6.1-sol"

// codeModeModels are the models of Codex 0.169's own catalog whose tool
// mode is code_mode_only; a model is one of them when its name starts
// with one, as Codex finds a model in its catalog. Any other model (one
// of a provider of the user's own too) runs shell commands with
// exec_command.
var codeModeModels = []string{
	"gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-sol", "gpt-6-luna", "gpt-6-astra",
	"gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-daybreak-blue-latest", "gpt-daybreak-red-latest",
}

// codeMode reports whether the model Codex resumes with, the one its
// config names (else its default), runs in code mode: offered exec and
// wait, not exec_command (features.code_mode_only puts any model in it).
// A model refuses a history that calls a tool it is not offered.
func codeMode(c config) bool {
	if c.codeModeOnly {
		return true
	}
	model := cmp.Or(c.model, defaultModel)
	return slices.ContainsFunc(codeModeModels, func(m string) bool { return strings.HasPrefix(model, m) })
}

// cxTools turns tool calls into the calls of the tools the resuming
// model is offered: in code mode (code) exec and wait, else
// exec_command, write_stdin and view_image. own says the session is
// Codex's: its calls of those tools go back as they were.
type cxTools struct {
	code, own bool
}

// cxCall is a call as a rollout holds it: a function's (arguments as
// JSON text) or a custom tool's (free-form input); shell says its
// output opens with the exit code, as a shell command's does.
type cxCall struct {
	name, input   string
	custom, shell bool
}

// call is the Codex call that does what p did, false when the resuming
// model is offered no tool for it. A shell command of any tool, Codex's
// older shell tools included, runs with exec_command (in code mode,
// from an exec script), with the directory it ran in when the call
// named one.
func (x cxTools) call(p loom.Part) (cxCall, bool) {
	args := string(p.Input)
	if args == "" {
		args = "{}"
	}
	if x.own {
		switch name := p.Name; {
		case x.code && name == execTool:
			if src, ok := freeform(p); ok {
				return cxCall{name: name, input: src, custom: true}, true
			}
		case x.code && name == waitTool, !x.code && (name == "write_stdin" || name == "view_image"):
			return cxCall{name: name, input: args}, true
		case name == execCommand:
			// Its own call, arguments and all (workdir, timeout …).
			if x.code {
				return cxCall{name: execTool, input: execScript(args), custom: true, shell: true}, true
			}
			return cxCall{name: name, input: args, shell: true}, true
		}
	}
	cmd, ok := shell.Command(p)
	if !ok {
		return cxCall{}, false
	}
	in := map[string]any{"cmd": cmd}
	var ran struct {
		Workdir string `json:"workdir"`
	}
	if json.Unmarshal(p.Input, &ran) == nil && ran.Workdir != "" {
		in["workdir"] = ran.Workdir
	}
	b, _ := json.Marshal(in)
	if x.code {
		return cxCall{name: execTool, input: execScript(string(b)), custom: true, shell: true}, true
	}
	return cxCall{name: execCommand, input: string(b), shell: true}, true
}

// execScript is an exec script that runs exec_command with args (a JSON
// object) and says what it gave, as the call's output then reads.
func execScript(args string) string {
	return "const r = await tools.exec_command(" + args + ");\n" +
		"text(`Process exited with code ${r.exit_code}\\nOutput:\\n${r.output}`);"
}

// freeform is the text input of a call to one of Codex's own custom
// tools (which the import keeps as {"input": text}), when p is one.
func freeform(p loom.Part) (string, bool) {
	var in map[string]json.RawMessage
	if json.Unmarshal(p.Input, &in) != nil || len(in) != 1 {
		return "", false
	}
	var text string
	if json.Unmarshal(in["input"], &text) != nil {
		return "", false
	}
	return text, true
}

// cxWriter builds a rollout's lines.
type cxWriter struct {
	lines []any
	// prompt is the first prompt, which Codex's thread list shows;
	// summaryFirst says it is a summary, for want of one.
	prompt       string
	summaryFirst bool
}

func (w *cxWriter) add(at time.Time, typ string, payload any) {
	w.lines = append(w.lines, map[string]any{"timestamp": handoff.Stamp(at), "type": typ, "payload": payload})
}

// call adds call c with the result of p, which it does.
func (w *cxWriter) call(at time.Time, id string, c cxCall, p loom.Part) {
	output := handoff.ResultText(p)
	if _, headed := headerExitCode(output); c.shell && !headed {
		// As a shell command's output opens (Codex's own exec_command
		// calls have their header already).
		code := 0
		if p.Status == loom.ToolError {
			code = 1
		}
		output = fmt.Sprintf("Process exited with code %d\nOutput:\n%s", code, output)
	}
	if c.custom {
		w.add(at, "response_item", map[string]any{"type": "custom_tool_call", "status": "completed", "name": c.name, "input": c.input, "call_id": id})
		w.add(at, "response_item", map[string]any{"type": "custom_tool_call_output", "call_id": id, "output": output})
		return
	}
	w.add(at, "response_item", map[string]any{"type": "function_call", "name": c.name, "arguments": c.input, "call_id": id})
	w.add(at, "response_item", map[string]any{"type": "function_call_output", "call_id": id, "output": output})
}

func (w *cxWriter) assistantText(at time.Time, text string) {
	w.add(at, "event_msg", map[string]any{"type": "agent_message", "message": text})
	w.add(at, "response_item", map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text}}})
}

func joinText(ps []loom.Part) string {
	var s string
	for _, p := range ps {
		if s != "" {
			s += "\n\n"
		}
		s += p.Text
	}
	return s
}
