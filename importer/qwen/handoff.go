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
		// A reply is its parts up to its calls; their results follow it,
		// and what it says after them is the next reply.
		var parts, responses []any
		flush := func() {
			if len(parts) == 0 {
				return
			}
			r := map[string]any{"message": map[string]any{"role": "model", "parts": parts}}
			if e.Model != "" {
				r["model"] = e.Model
			}
			add("assistant", e, r)
			if len(responses) > 0 {
				add("tool_result", e, map[string]any{"message": map[string]any{"role": "user", "parts": responses}})
			}
			parts, responses = nil, nil
		}
		for _, p := range e.Parts {
			switch p.Type {
			case loom.PartReasoning, loom.PartText:
				if len(responses) > 0 {
					flush()
				}
				part := map[string]any{"text": p.Text}
				if p.Type == loom.PartReasoning {
					part["thought"] = true
				}
				parts = append(parts, part)
			case loom.PartTool:
				name, args := h.Call(p, handoff.Tools{Target: Tool, Shell: "run_shell_command", Read: "read_file", ReadKey: "file_path"})
				if name == "" {
					if len(responses) > 0 {
						flush()
					}
					out.ToolRecords++
					parts = append(parts, map[string]any{"text": handoff.ToolRecord(p)})
					continue
				}
				out.ToolCalls++
				callID := ids.For(p)
				resp := map[string]any{"output": handoff.ResultText(p)}
				if p.Status == loom.ToolError {
					resp = map[string]any{"error": handoff.ResultText(p)}
				}
				parts = append(parts, map[string]any{"functionCall": map[string]any{"id": callID, "name": name, "args": args}})
				responses = append(responses, map[string]any{"functionResponse": map[string]any{"id": callID, "name": name, "response": resp}})
			}
		}
		flush()
	}
	if err := handoff.WriteLines(ctx, out.Path, recs); err != nil {
		return nil, err
	}
	return out, nil
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
