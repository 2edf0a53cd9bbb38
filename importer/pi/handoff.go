package pi

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

var _ handoff.Writer = Format{}

// Handoff writes h as a new Pi session file,
// sessions/--<dir>--/<time>_<id>.jsonl under $PI_CODING_AGENT_DIR or
// ~/.pi/agent (or $PI_CODING_AGENT_SESSION_DIR when set), which
// `pi --session ID` resumes: the header (format version 3, h.Dir as its
// working directory, the loom session in loomHandoff), then one chain of
// message entries. Shell commands become bash calls and file reads read
// calls, each with its toolResult, and a session imported from Pi keeps
// its calls as they were; any other tool call is told as text.
// Reasoning is kept as thinking blocks, unsigned: Pi gives a model the
// thinking of another model's replies as text. The replies name the
// provider "loom", so that Pi treats them as another model's.
func (Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	dir := importer.EnvPath(h.Env, h.Home)(EnvSessionDir)
	if dir == "" {
		agent, err := importer.HandoffDir(Tool, h, EnvAgentDir, ".pi", "agent")
		if err != nil {
			return nil, err
		}
		agent = importer.ExpandHome(agent, h.Home)
		dir = filepath.Join(agent, "sessions", "--"+strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(strings.TrimLeft(h.Dir, `/\`))+"--")
	}
	u, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("pi: %w", err)
	}
	id := h.SessionID(u.String)
	now := h.Time()
	out := &handoff.Handed{Tool: Tool, SessionID: id,
		Path:   filepath.Join(dir, strings.NewReplacer(":", "-", ".", "-").Replace(handoff.Stamp(now))+"_"+id+".jsonl"),
		Resume: handoff.ResumeIn(h.Dir, "pi", "--session", id)}
	// Written back: in the file it was in, when that is in the
	// directory of h.Dir, where pi --session looks for it.
	if p := h.KeptPath(func(p string) bool { return filepath.Dir(p) == dir && strings.HasSuffix(p, "_"+id+".jsonl") }); p != "" {
		out.Path = p
	}
	recs := []any{map[string]any{"type": "session", "version": 3, "id": id, "timestamp": handoff.Stamp(now), "cwd": h.Dir,
		handoff.OriginField: h.Origin()}}
	c := &messageChain{recs: recs}
	ids := handoff.CallIDs{Prefix: "call_loom"}
	for _, e := range handoff.Entries(h, out) {
		at, ms := handoff.Stamp(e.At), e.At.UnixMilli()
		if e.Role == loom.RoleUser {
			var content []any
			for _, p := range e.Parts {
				content = append(content, map[string]any{"type": "text", "text": p.Text})
			}
			c.add(at, map[string]any{"role": "user", "content": content, "timestamp": ms})
			continue
		}
		importer.WriteReply(h, out, &ids, handoff.Tools{Target: Tool, Shell: "bash", Read: "read", ReadKey: "path"}, e.Parts,
			&handedReply{c: c, at: at, ms: ms, model: e.Model})
	}
	recs = c.recs
	if err := handoff.WriteLines(ctx, out.Path, recs); err != nil {
		return nil, err
	}
	return out, nil
}

// messageChain is a handed-off session's entries, one chain of
// parentId.
type messageChain struct {
	recs   []any
	parent any
}

func (c *messageChain) add(at string, msg map[string]any) {
	eid := strings.ReplaceAll(uuid.NewString(), "-", "")[:8]
	c.recs = append(c.recs, map[string]any{"type": "message", "id": eid, "parentId": c.parent, "timestamp": at, "message": msg})
	c.parent = eid
}

// handedReply writes a reply's entries: a reply is its blocks up to its
// calls; their results follow it, and what it says after them is the
// next reply.
type handedReply struct {
	c       *messageChain
	at      string
	ms      int64
	model   string
	content []any
	results []map[string]any
}

var _ importer.ReplyWriter = (*handedReply)(nil)

// Part adds a thinking or text block.
func (r *handedReply) Part(p loom.Part) {
	if p.Type == loom.PartReasoning {
		r.content = append(r.content, map[string]any{"type": "thinking", "thinking": p.Text})
	} else {
		r.content = append(r.content, map[string]any{"type": "text", "text": p.Text})
	}
}

// Record adds a call told as text, as a text block.
func (r *handedReply) Record(text string) {
	r.content = append(r.content, map[string]any{"type": "text", "text": text})
}

// Calls is how many calls the reply holds.
func (r *handedReply) Calls() int { return len(r.results) }

// Call adds tool part p's call, and its toolResult.
func (r *handedReply) Call(callID, name string, args any, p loom.Part) {
	r.content = append(r.content, map[string]any{"type": "toolCall", "id": callID, "name": name, "arguments": args})
	r.results = append(r.results, map[string]any{"role": "toolResult", "toolCallId": callID, "toolName": name,
		"content": []any{map[string]any{"type": "text", "text": handoff.ResultText(p)}},
		"isError": p.Status == loom.ToolError, "timestamp": r.ms})
}

// Flush writes what the reply holds so far, then its calls' results.
func (r *handedReply) Flush() {
	if len(r.content) == 0 {
		return
	}
	stop := "stop"
	if len(r.results) > 0 {
		stop = "toolUse"
	}
	r.c.add(r.at, map[string]any{"role": "assistant", "content": r.content, "api": "loom", "provider": "loom", "model": r.model,
		"usage": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
			"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
		"stopReason": stop, "timestamp": r.ms})
	for _, res := range r.results {
		r.c.add(r.at, res)
	}
	r.content, r.results = nil, nil
}
