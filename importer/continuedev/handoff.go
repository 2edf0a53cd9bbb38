package continuedev

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

var _ handoff.Writer = Format{}

// untitled is the title Continue's CLI gives a session it has not named.
const untitled = "Untitled Session"

// Handoff writes h as a new Continue session, sessions/<uuid>.json under
// $CONTINUE_GLOBAL_DIR or ~/.continue, which `cn --fork ID` continues
// as a new session of the same history (cn resumes no session by its
// id; `cn --resume` takes the session written last, whatever its
// directory, which the handed-off one is until cn writes another): the
// session's id, title and h.Dir as its workspace, and its history, one
// item a message. The first item records the loom session in
// loomHandoff, which cn keeps when it saves the session again and
// copies into a fork (it drops fields of the session's own that it
// does not know). A reply's calls are its message's toolCalls, each with its
// result in the item's toolCallStates (done, or errored for a failed
// call), as cn records its own; shell commands become Bash calls and
// file reads Read calls, and a session imported from Continue keeps its
// calls as they were; any other tool call is told as text. Reasoning is
// kept as the item's reasoning. sessions.json, the list Continue's
// editor extensions show, is left to cn, which adds the session when it
// next saves it.
func (Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	base, err := importer.HandoffDir(Tool, h, globalEnv, ".continue")
	if err != nil {
		return nil, err
	}
	id := h.SessionID(uuid.NewString)
	out := &handoff.Handed{Tool: Tool, SessionID: id,
		Path:   filepath.Join(base, "sessions", id+".json"),
		Resume: handoff.ResumeIn(h.Dir, "cn", "--fork", id)}
	tools := handoff.Tools{Target: Tool, Shell: "Bash", Read: "Read", ReadKey: "filepath"}
	isCall := h.IsCall(tools)
	ids := handoff.CallIDs{Prefix: "call_loom"}
	var history []map[string]any
	for _, e := range handoff.Entries(h, out) {
		if e.Role == loom.RoleUser {
			history = append(history, map[string]any{"message": map[string]any{"role": "user", "content": e.Text()}, "contextItems": []any{}})
			continue
		}
		for _, step := range e.Steps(isCall) {
			var text, reasoning string
			var calls, states []any
			for _, p := range step {
				switch {
				case p.Type == loom.PartReasoning:
					reasoning = join(reasoning, p.Text)
				case p.Type == loom.PartText:
					text = join(text, p.Text)
				case isCall(p):
					out.ToolCalls++
					name, args := h.Call(p, tools)
					raw, err := json.Marshal(args)
					if err != nil {
						return nil, fmt.Errorf("continue: %w", err)
					}
					call := map[string]any{"id": ids.For(p), "type": "function", "function": map[string]any{"name": name, "arguments": string(raw)}}
					status := "done"
					if p.Status == loom.ToolError {
						status = "errored"
					}
					calls = append(calls, call)
					states = append(states, map[string]any{"toolCallId": call["id"], "toolCall": call, "status": status, "parsedArgs": args,
						"output": []any{map[string]any{"name": "Tool Result", "description": "Tool execution result", "content": handoff.ResultText(p)}}})
				default:
					out.ToolRecords++
					text = join(text, handoff.ToolRecord(p))
				}
			}
			msg := map[string]any{"role": "assistant", "content": text}
			item := map[string]any{"message": msg, "contextItems": []any{}}
			if calls != nil {
				msg["toolCalls"], item["toolCallStates"] = calls, states
			}
			if reasoning != "" {
				ms := e.At.UnixMilli()
				item["reasoning"] = map[string]any{"active": false, "text": reasoning, "startAt": ms, "endAt": ms}
			}
			history = append(history, item)
		}
	}
	if len(history) > 0 {
		history[0][handoff.OriginField] = h.Origin()
	}
	title := h.Session.Title
	if title == "" {
		title = untitled
	}
	if err := handoff.WriteJSON(ctx, out.Path, map[string]any{"sessionId": id, "title": title, "workspaceDirectory": h.Dir, "history": history}); err != nil {
		return nil, err
	}
	return out, nil
}

// join is a and b, a blank line between when both are there.
func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}
