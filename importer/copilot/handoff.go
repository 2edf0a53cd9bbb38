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
	ev := &eventChain{}
	now := handoff.Stamp(h.Time())
	ev.add("session.start", now, map[string]any{"sessionId": id, "version": 1, "producer": "loom", "copilotVersion": formatVersion, "startTime": now,
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
			ev.add("user.message", at, map[string]any{"content": text, "messageId": uuid.NewString()})
			continue
		}
		importer.WriteReply(h, out, &ids, handoff.Tools{Target: Tool, Shell: "bash", Read: "view", ReadKey: "path"}, e.Parts,
			&handedReply{ev: ev, at: at, model: e.Model})
	}
	if err := handoff.WriteLines(ctx, out.Path, ev.events); err != nil {
		return nil, err
	}
	return out, nil
}

// eventChain is a handed-off session's events, one chain of parentId.
type eventChain struct {
	events []any
	parent any
}

func (c *eventChain) add(typ, at string, d map[string]any) {
	eid := uuid.NewString()
	c.events = append(c.events, map[string]any{"type": typ, "data": d, "id": eid, "timestamp": at, "parentId": c.parent})
	c.parent = eid
}

// handedReply writes a reply's events: a reply is its text and calls up
// to their results; what it says after them is the next reply.
type handedReply struct {
	ev                *eventChain
	at, model         string
	text, reasoning   string
	requests, results []map[string]any
}

var _ importer.ReplyWriter = (*handedReply)(nil)

// Part adds a text or reasoning part to the reply's content or
// reasoningText.
func (r *handedReply) Part(p loom.Part) {
	if p.Type == loom.PartReasoning {
		joinText(&r.reasoning, p.Text)
	} else {
		joinText(&r.text, p.Text)
	}
}

// Record adds a call told as text to the reply's content.
func (r *handedReply) Record(text string) { joinText(&r.text, text) }

// Calls is how many tool requests the reply holds.
func (r *handedReply) Calls() int { return len(r.results) }

// Call adds the request of tool part p, and its result.
func (r *handedReply) Call(callID, name string, args any, p loom.Part) {
	r.requests = append(r.requests, map[string]any{"toolCallId": callID, "name": name, "arguments": args, "type": "function"})
	res := map[string]any{"toolCallId": callID, "success": p.Status != loom.ToolError,
		"result": map[string]any{"content": handoff.ResultText(p)}}
	if p.Status == loom.ToolError {
		res["error"] = map[string]any{"message": handoff.ResultText(p), "code": "failure"}
		delete(res, "result")
	}
	r.results = append(r.results, res)
}

// Flush writes what the reply holds so far: an assistant.message and the
// tool.execution_complete of each of its calls.
func (r *handedReply) Flush() {
	if r.text == "" && r.reasoning == "" && len(r.requests) == 0 {
		return
	}
	d := map[string]any{"messageId": uuid.NewString(), "content": r.text, "toolRequests": r.requests}
	if r.requests == nil {
		d["toolRequests"] = []any{}
	}
	if r.reasoning != "" {
		d["reasoningText"] = r.reasoning
	}
	if r.model != "" {
		d["model"] = r.model
	}
	r.ev.add("assistant.message", r.at, d)
	for _, res := range r.results {
		r.ev.add("tool.execution_complete", r.at, res)
	}
	r.text, r.reasoning, r.requests, r.results = "", "", nil, nil
}

// joinText adds t to *s, after a blank line.
func joinText(s *string, t string) {
	if *s != "" {
		*s += "\n\n"
	}
	*s += t
}

// formatVersion is the Copilot CLI whose events a handed-off file
// follows, its session.start's copilotVersion (which Copilot CLI
// requires).
const formatVersion = "1.0.102"
