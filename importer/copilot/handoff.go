package copilot

import (
	"context"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

var _ handoff.Writer = Format{}

// Handoff writes h as a new Copilot CLI session,
// session-state/<id>/events.jsonl under $COPILOT_HOME or ~/.copilot,
// which `copilot --resume ID` in h.Dir takes: a session.start event (the
// id, h.Dir as its context's cwd, the loom session in loomHandoff), then
// user.message and assistant.message events, one chain of parentId. A
// reply's calls are its toolRequests, each followed by its
// tool.execution_complete; shell commands become bash calls and file
// reads view calls, and a session imported from Copilot CLI keeps its
// calls as they were; any other tool call is told as text. Reasoning is
// kept as the reply's reasoningText (which Copilot CLI does not send
// back to its model). Copilot CLI needs neither its
// workspace.yaml nor a row in its session-store.db index to resume it.
func (Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	base, err := importer.HandoffDir(Tool, h, EnvHome, ".copilot")
	if err != nil {
		return nil, err
	}
	id := h.SessionID(uuid.NewString)
	out := &handoff.Handed{Tool: Tool, SessionID: id,
		Path:   filepath.Join(base, "session-state", id, "events.jsonl"),
		Resume: handoff.ResumeIn(h.Dir, "copilot", "--resume", id)}
	var events []any
	parent := any(nil)
	add := func(typ, at string, d map[string]any) {
		eid := uuid.NewString()
		events = append(events, map[string]any{"type": typ, "data": d, "id": eid, "timestamp": at, "parentId": parent})
		parent = eid
	}
	now := handoff.Stamp(h.Time())
	add("session.start", now, map[string]any{"sessionId": id, "version": 1, "producer": "loom", "copilotVersion": formatVersion, "startTime": now,
		"context": map[string]any{"cwd": h.Dir}, handoff.OriginField: h.Origin()})
	ids := handoff.CallIDs{Prefix: "call_loom"}
	for _, e := range handoff.Entries(h, out) {
		at := handoff.Stamp(e.At)
		if e.Role == loom.RoleUser {
			text := ""
			for i, p := range e.Parts {
				if i > 0 {
					text += "\n\n"
				}
				text += p.Text
			}
			add("user.message", at, map[string]any{"content": text, "messageId": uuid.NewString()})
			continue
		}
		// A reply is its text and calls up to their results; what it says
		// after them is the next reply.
		var text, reasoning string
		var requests, results []map[string]any
		flush := func() {
			if text == "" && reasoning == "" && len(requests) == 0 {
				return
			}
			d := map[string]any{"messageId": uuid.NewString(), "content": text, "toolRequests": requests}
			if requests == nil {
				d["toolRequests"] = []any{}
			}
			if reasoning != "" {
				d["reasoningText"] = reasoning
			}
			if e.Model != "" {
				d["model"] = e.Model
			}
			add("assistant.message", at, d)
			for _, r := range results {
				add("tool.execution_complete", at, r)
			}
			text, reasoning, requests, results = "", "", nil, nil
		}
		join := func(s *string, t string) {
			if *s != "" {
				*s += "\n\n"
			}
			*s += t
		}
		for _, p := range e.Parts {
			switch p.Type {
			case loom.PartReasoning, loom.PartText:
				if len(results) > 0 {
					flush()
				}
				if p.Type == loom.PartReasoning {
					join(&reasoning, p.Text)
				} else {
					join(&text, p.Text)
				}
			case loom.PartTool:
				name, args := h.Call(p, handoff.Tools{Target: Tool, Shell: "bash", Read: "view", ReadKey: "path"})
				if name == "" {
					if len(results) > 0 {
						flush()
					}
					out.ToolRecords++
					join(&text, handoff.ToolRecord(p))
					continue
				}
				out.ToolCalls++
				callID := ids.For(p)
				requests = append(requests, map[string]any{"toolCallId": callID, "name": name, "arguments": args, "type": "function"})
				r := map[string]any{"toolCallId": callID, "success": p.Status != loom.ToolError,
					"result": map[string]any{"content": handoff.ResultText(p)}}
				if p.Status == loom.ToolError {
					r["error"] = map[string]any{"message": handoff.ResultText(p), "code": "failure"}
					delete(r, "result")
				}
				results = append(results, r)
			}
		}
		flush()
	}
	if err := handoff.WriteLines(ctx, out.Path, events); err != nil {
		return nil, err
	}
	return out, nil
}

// formatVersion is the Copilot CLI whose events a handed-off file
// follows, its session.start's copilotVersion (which Copilot CLI
// requires).
const formatVersion = "1.0.102"
