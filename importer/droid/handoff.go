package droid

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
)

var _ handoff.Writer = Format{}

// Handoff writes h as a new droid session, sessions/<dir>/<uuid>.jsonl
// under $FACTORY_HOME_OVERRIDE/.factory or ~/.factory (<dir> is h.Dir
// with each / made a -, as droid names the directory of a working
// directory), which `droid --resume ID` in h.Dir resumes, and `droid
// exec --fork ID PROMPT` continues as a new session without a terminal:
// a session_start line (the id, the title, h.Dir as its cwd, the loom
// session in loomHandoff, which droid copies into the session_start of
// a fork), then one chain of message lines of Anthropic's form. A reply
// is text and tool_use blocks, each run of calls followed by a user
// message of their tool_results (is_error for a failed one); shell
// commands become Execute calls and file reads Read calls, and a
// session imported from droid keeps its calls as they were; any other
// tool call is told as text. Reasoning is dropped: droid sends its
// model thinking blocks with the signature its provider gave them.
func (Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	roots := Format{}.Roots(h.Env, h.Home)
	if len(roots) == 0 {
		return nil, fmt.Errorf("droid: no home directory to write to")
	}
	id := h.SessionID(uuid.NewString)
	out := &handoff.Handed{Tool: Tool, SessionID: id,
		Path:   filepath.Join(roots[0], strings.ReplaceAll(h.Dir, "/", "-"), id+".jsonl"),
		Resume: handoff.ResumeIn(h.Dir, "droid", "--resume", id)}
	lines := []any{map[string]any{"type": "session_start", "id": id, "title": h.Session.Title, "owner": "unknown", "version": 2,
		"cwd": h.Dir, "isSessionTitleManuallySet": false, handoff.OriginField: h.Origin()}}
	parent := ""
	add := func(at time.Time, msg map[string]any) {
		mid := uuid.NewString()
		l := map[string]any{"type": "message", "id": mid, "timestamp": handoff.Stamp(at), "message": msg}
		if parent != "" {
			// The first message names no parent: droid refuses a null one.
			l["parentId"] = parent
		}
		lines = append(lines, l)
		parent = mid
	}
	tools := handoff.Tools{Target: Tool, Shell: "Execute", Read: "Read", ReadKey: "file_path"}
	ids := handoff.CallIDs{Prefix: "call_loom"}
	for _, e := range handoff.Entries(h, out) {
		if e.Role == loom.RoleUser {
			add(e.At, map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": e.Text()}}})
			continue
		}
		for _, step := range e.Steps(h.IsCall(tools)) {
			blocks, results := h.Blocks(step, tools, &ids, out, false)
			if len(blocks) == 0 {
				continue
			}
			msg := map[string]any{"role": "assistant", "content": blocks}
			if e.Model != "" {
				msg["modelId"] = e.Model
			}
			add(e.At, msg)
			if results != nil {
				add(e.At, map[string]any{"role": "user", "content": results})
			}
		}
	}
	if err := handoff.WriteLines(ctx, out.Path, lines); err != nil {
		return nil, err
	}
	return out, nil
}
