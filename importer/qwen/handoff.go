package qwen

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

var _ handoff.Writer = Format{}

// Handoff writes h as a new Qwen Code chat,
// projects/<project>/chats/<uuid>.jsonl under $QWEN_HOME or ~/.qwen,
// where <project> is h.Dir with every character but letters and digits
// as "-", as Qwen Code names a project's directory; `qwen --resume ID`
// in h.Dir takes it, as the first record names h.Dir its cwd. The
// records are one chain (uuid, parentUuid); the first records the loom
// session in loomHandoff. Shell commands become run_shell_command calls
// and file reads read_file calls, each with its tool_result, and a
// session imported from Qwen Code keeps its calls as they were; any
// other tool call is told as text. Reasoning is kept as thought parts.
func (Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	base, err := importer.HandoffDir(Tool, h, EnvHome, ".qwen")
	if err != nil {
		return nil, err
	}
	id := h.SessionID(uuid.NewString)
	out := &handoff.Handed{Tool: Tool, SessionID: id,
		Path:   filepath.Join(base, "projects", projectName(h.Dir), "chats", id+".jsonl"),
		Resume: handoff.ResumeIn(h.Dir, "qwen", "--resume", id)}
	var recs []any
	parent := any(nil)
	add := func(typ string, e handoff.Entry, r map[string]any) {
		u := uuid.NewString()
		r["uuid"], r["parentUuid"], r["sessionId"], r["timestamp"] = u, parent, id, handoff.Stamp(e.At)
		r["type"], r["cwd"], r["version"] = typ, h.Dir, "loom"
		if len(recs) == 0 {
			r[handoff.OriginField] = h.Origin()
		}
		recs = append(recs, r)
		parent = u
	}
	ids := handoff.CallIDs{Prefix: "call_loom"}
	for _, e := range handoff.Entries(h, out) {
		if e.Role == loom.RoleUser {
			var parts []any
			for _, p := range e.Parts {
				parts = append(parts, map[string]any{"text": p.Text})
			}
			add("user", e, map[string]any{"message": map[string]any{"role": "user", "parts": parts}})
			continue
		}
		importer.WriteReply(h, out, &ids, handoff.Tools{Target: Tool, Shell: "run_shell_command", Read: "read_file", ReadKey: "file_path"}, e.Parts,
			&handedReply{add: add, e: e})
	}
	if err := handoff.WriteLines(ctx, out.Path, recs); err != nil {
		return nil, err
	}
	return out, nil
}

// handedReply writes a reply's records: a reply is its parts up to its
// calls; their results follow it, and what it says after them is the
// next reply.
type handedReply struct {
	add              func(typ string, e handoff.Entry, r map[string]any)
	e                handoff.Entry
	parts, responses []any
}

var _ importer.ReplyWriter = (*handedReply)(nil)

// Part adds a text part, a thought for reasoning.
func (r *handedReply) Part(p loom.Part) {
	part := map[string]any{"text": p.Text}
	if p.Type == loom.PartReasoning {
		part["thought"] = true
	}
	r.parts = append(r.parts, part)
}

// Record adds a call told as text.
func (r *handedReply) Record(text string) { r.parts = append(r.parts, map[string]any{"text": text}) }

// Calls is how many calls the reply holds.
func (r *handedReply) Calls() int { return len(r.responses) }

// Call adds tool part p's functionCall, and its functionResponse.
func (r *handedReply) Call(callID, name string, args any, p loom.Part) {
	resp := map[string]any{"output": handoff.ResultText(p)}
	if p.Status == loom.ToolError {
		resp = map[string]any{"error": handoff.ResultText(p)}
	}
	r.parts = append(r.parts, map[string]any{"functionCall": map[string]any{"id": callID, "name": name, "args": args}})
	r.responses = append(r.responses, map[string]any{"functionResponse": map[string]any{"id": callID, "name": name, "response": resp}})
}

// Flush writes the reply held so far, then its calls' results.
func (r *handedReply) Flush() {
	if len(r.parts) == 0 {
		return
	}
	rec := map[string]any{"message": map[string]any{"role": "model", "parts": r.parts}}
	if r.e.Model != "" {
		rec["model"] = r.e.Model
	}
	r.add("assistant", r.e, rec)
	if len(r.responses) > 0 {
		r.add("tool_result", r.e, map[string]any{"message": map[string]any{"role": "user", "parts": r.responses}})
	}
	r.parts, r.responses = nil, nil
}

// projectName is the directory Qwen Code keeps a project's sessions in.
func projectName(dir string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, dir)
}
