package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

var _ handoff.Writer = Format{}

// handoffOriginator is the program a handed-off rollout says started it.
const handoffOriginator = "loom_handoff"

// Handoff writes h as a new Codex rollout,
// sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl under $CODEX_HOME or
// ~/.codex: session_meta first (recording the loom session in
// loom_handoff), then the conversation as response items, with the
// user_message and agent_message events Codex's session list reads.
// Shell commands become exec_command calls (the shell tool Codex
// offers) with their outputs, and a session imported from Codex keeps
// its other calls as they were; any
// other tool call (Codex has no tool that reads a file or searches
// sessions) is told as text. Reasoning is dropped: Codex sends back only
// the reasoning items the Responses API gave it, encrypted. The meta
// names no model provider: Codex refuses to resume a session under
// another provider than the one it names, and the session should go on
// with whichever the user has configured. Where Codex keeps a thread
// database, the rollout is registered in it (registerThread), so that
// `codex resume --last` finds it.
func (Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	dir, err := importer.HandoffDir(Tool, h, "CODEX_HOME", ".codex")
	if err != nil {
		return nil, err
	}
	u, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("codex: %w", err)
	}
	id := u.String()
	now := h.Time()
	out := &handoff.Handed{Tool: Tool, SessionID: id,
		Path: filepath.Join(dir, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"),
			"rollout-"+now.Format("2006-01-02T15-04-05")+"-"+id+".jsonl"),
		Resume: handoff.ResumeIn(h.Dir, "codex", "resume", id)}
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
				name, args := cxTool(p, h.FromTool(Tool))
				if name == "" {
					out.ToolRecords++
					w.assistantText(at, handoff.ToolRecord(p))
					continue
				}
				out.ToolCalls++
				callID := ids.For(p)
				code := 0
				if p.Status == loom.ToolError {
					code = 1
				}
				if free, ok := freeform(p, h.FromTool(Tool)); ok {
					// A custom tool's call (apply_patch) goes back as one.
					output, _ := json.Marshal(map[string]any{"output": handoff.ResultText(p), "metadata": map[string]any{"exit_code": code, "duration_seconds": 0}})
					w.add(at, "response_item", map[string]any{"type": "custom_tool_call", "status": "completed", "name": name, "input": free, "call_id": callID})
					w.add(at, "response_item", map[string]any{"type": "custom_tool_call_output", "call_id": callID, "output": string(output)})
					continue
				}
				output := handoff.ResultText(p)
				if _, headed := headerExitCode(output); name == execCommand && !headed {
					// As exec_command's own output opens (Codex's own
					// calls have their header already).
					output = fmt.Sprintf("Process exited with code %d\nOutput:\n%s", code, output)
				}
				w.add(at, "response_item", map[string]any{"type": "function_call", "name": name, "arguments": args, "call_id": callID})
				w.add(at, "response_item", map[string]any{"type": "function_call_output", "call_id": callID, "output": output})
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

// execCommand is the shell tool Codex offers its models (0.169 offers
// no other: not shell, shell_command or local_shell).
const execCommand = "exec_command"

// cxTool is the Codex function that does what p did and its arguments
// (the call itself when own says it is Codex's); no name when Codex has
// no such tool. A shell command of any tool, Codex's older shell tools
// included, is an exec_command call, with the directory it ran in when
// the call named one.
func cxTool(p loom.Part, own bool) (string, string) {
	cmd, shell := handoff.ShellCommand(p)
	if own && (!shell || p.Name == execCommand) {
		// Its own call, arguments and all (a command's workdir and
		// timeout too).
		args := string(p.Input)
		if args == "" {
			args = "{}"
		}
		return p.Name, args
	}
	if shell {
		in := map[string]any{"cmd": cmd}
		var ran struct {
			Workdir string `json:"workdir"`
		}
		if json.Unmarshal(p.Input, &ran) == nil && ran.Workdir != "" {
			in["workdir"] = ran.Workdir
		}
		args, _ := json.Marshal(in)
		return execCommand, string(args)
	}
	return "", ""
}

// freeform is the text input of a call to one of Codex's own custom
// tools (which the import keeps as {"input": text}), when p is one.
func freeform(p loom.Part, own bool) (string, bool) {
	if !own || p.Name == "shell" || p.Name == "local_shell" {
		return "", false
	}
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
