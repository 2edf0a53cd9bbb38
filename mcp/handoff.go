package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
)

// Handoff is what the handoff tool needs: the agents' writers, and where
// their files live (Env for their home-directory overrides, Home the
// user's home). The tool writes another agent's session files, so it is
// offered only when Config.Handoff is set (config.toml's [mcp] handoff).
type Handoff struct {
	Writers []handoff.Writer
	Env     func(string) string
	Home    string
}

type handoffArgs struct {
	Ref  string `json:"ref"`
	To   string `json:"to"`
	Dir  string `json:"dir"`
	Last int    `json:"last"`
}

func (t *tools) handoff() tool {
	var names []string
	for _, w := range t.cfg.Handoff.Writers {
		names = append(names, `"`+w.Tool()+`"`)
	}
	return tool{
		tool: &sdk.Tool{
			Name:        "handoff",
			Title:       "Hand a session to another agent",
			Description: `Writes a session as a new session of another agent (Claude Code, Codex CLI, GitHub Copilot CLI, Gemini CLI, Pi, Qwen Code, opencode, Kilo Code CLI, Cline CLI, Continue's cn or Factory droid), in that agent's own files, so that the user can continue it there with its whole history; returns the command that resumes it. Use it when the user asks to continue a conversation in another agent. ref names the session as in read_session; dir is the project directory the agent continues in (default: the session's own).`,
			InputSchema: json.RawMessage(`{"type": "object", "properties": {
		"ref": {"type": "string", "description": "The session: its id or a unique id prefix of at least 4 characters, its key, or its title."},
		"to": {"type": "string", "enum": [` + strings.Join(names, ", ") + `], "description": "The agent to continue in."},
		"dir": {"type": "string", "description": "Absolute path of the project directory the agent continues in; default: the session's project root."},
		"last": {"type": "integer", "minimum": 1, "description": "Carry only the last this many turns; default: all."}
	}, "required": ["ref", "to"]}`),
			Annotations: &sdk.ToolAnnotations{Title: "Hand a session to another agent", DestructiveHint: new(false), OpenWorldHint: new(false)},
		},
		run: t.runHandoff,
	}
}

func (t *tools) runHandoff(ctx context.Context, c *call) (*result, error) {
	var a handoffArgs
	if err := c.decode(&a, "ref, to, dir and last"); err != nil {
		return nil, err
	}
	h := t.cfg.Handoff
	var w handoff.Writer
	for _, x := range h.Writers {
		if x.Tool() == a.To {
			w = x
		}
	}
	switch {
	case a.Ref == "":
		return nil, loom.Errorf(loom.EINVALID, "ref is required: the session to hand off")
	case w == nil:
		return nil, loom.Errorf(loom.EINVALID, "to must be one of the agents in the tool's schema, not %q", a.To)
	case a.Dir != "" && !filepath.IsAbs(a.Dir):
		return nil, loom.Errorf(loom.EINVALID, "dir must be an absolute path, not %q", a.Dir)
	case a.Last < 0:
		return nil, loom.Errorf(loom.EINVALID, "last must be 1 or more")
	}
	s, err := t.resolve(ctx, c, a.Ref)
	if err != nil {
		return nil, err
	}
	rep, err := handoff.Run(ctx, c.st, s, w, handoff.Options{Dir: a.Dir, Last: a.Last, Env: h.Env, Home: h.Home, Now: t.cfg.Now()})
	if rep != nil {
		rep.Redacted = c.redacted()
	}
	if loom.ErrorCode(err) == loom.EINVALID {
		return nil, loom.Errorf(loom.EINVALID, "%s", strings.Replace(loom.ErrorMessage(err), "; name one", "; name one in dir", 1))
	}
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Wrote %s: %d messages, %d tool calls", rep.Path, rep.Messages, rep.ToolCalls+rep.ToolRecords)
	if rep.ToolRecords > 0 {
		fmt.Fprintf(&b, " (%d as text records)", rep.ToolRecords)
	}
	if rep.FirstTurn > 1 {
		fmt.Fprintf(&b, ", turns %d–%d of %d", rep.FirstTurn, rep.LastTurn, rep.Turns)
	}
	b.WriteString(".\n")
	if len(rep.Dropped) > 0 {
		d, _ := json.Marshal(rep.Dropped)
		fmt.Fprintf(&b, "Not carried: %s.\n", d)
	}
	fmt.Fprintf(&b, "The user resumes it with:\n%s", rep.Resume)
	return &result{text: b.String(), structured: rep, redacted: rep.Redacted}, nil
}
