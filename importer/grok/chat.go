package grok

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// chat makes the messages of a session's whole history, a line at a
// time.
type chat struct {
	res *importer.Result
	t   *importer.Transcript
	r   *read
	at  time.Time
	// prompts says the user's prompts have prompt indexes (what has none
	// is Grok's own context); turn is the index of the prompt read last.
	prompts   bool
	turn      int
	callNames map[string]string // a call's tool, by call id
}

// line reads line l as message mid, and notes the turn of each message
// it adds.
func (h *chat) line(mid string, l line) {
	n := len(h.t.Msgs)
	switch cmp.Or(l.Type, l.Role) {
	case "system":
		// Grok's system prompt, the same long text in every session,
		// is not kept.
		h.res.Skip("system-prompt")
	case "user":
		h.user(mid, l)
	case "reasoning":
		text := l.Summary
		if len(text) == 0 {
			text = l.Content
		}
		h.t.Join(mid, loom.RoleAssistant, h.at, importer.TextParts(mid+"/r", loom.PartReasoning, text)...)
	case "assistant":
		h.assistant(mid, l)
	case "tool_result", "tool":
		h.toolResult(l)
	default:
		h.res.Skip("unknown:" + importer.TypeName(cmp.Or(l.Type, l.Role)))
	}
	for range len(h.t.Msgs) - n {
		h.r.prompt = append(h.r.prompt, h.turn)
	}
}

// user reads a user's line: a compaction's summary, Grok's own context,
// or the user's prompt.
func (h *chat) user(mid string, l line) {
	parts := importer.TextParts(mid, loom.PartText, l.Content)
	role := loom.RoleUser
	switch {
	case isSummary(parts):
		h.t.Add(&loom.Message{ID: mid, Role: loom.RoleSummary, CreatedAt: h.at, Parts: parts, Usage: loom.Usage{Compactions: 1}})
		return
	case l.SyntheticReason != "" && l.SyntheticReason != "interjection", h.prompts && l.PromptIndex == nil:
		// Grok's own context (the user's environment, rules,
		// reminders) is sent as user messages without a prompt
		// index.
		role = loom.RoleSystem
	}
	if l.PromptIndex != nil {
		h.turn = *l.PromptIndex
	}
	for j := range parts {
		if role == loom.RoleUser {
			parts[j].Text = userQuery(parts[j].Text)
		}
	}
	h.t.Add(&loom.Message{ID: mid, Role: role, CreatedAt: h.at, Parts: parts})
}

// assistant reads a reply: its text and tool calls.
func (h *chat) assistant(mid string, l line) {
	parts := importer.TextParts(mid, loom.PartText, l.Content)
	for i, c := range l.ToolCalls {
		args := c.Arguments
		if len(args) == 0 {
			args = c.Function.Arguments
		}
		h.callNames[c.ID] = cmp.Or(c.Name, c.Function.Name)
		parts = append(parts, importer.ToolCall(mid+"/call/"+strconv.Itoa(i), c.ID, cmp.Or(c.Name, c.Function.Name), args))
	}
	if m := h.t.Join(mid, loom.RoleAssistant, h.at, parts...); m != nil {
		m.Model = cmp.Or(strings.TrimSpace(l.ModelID), m.Model)
	}
}

// toolResult completes a tool's call; the result of a spawn names the
// sub-agent it ran.
func (h *chat) toolResult(l line) {
	out := importer.Text(importer.TextParts("", loom.PartText, l.Content))
	if sub := subagentID(out); sub != "" && h.callNames[l.ToolCallID] == spawnTool {
		for mi := len(h.t.Msgs) - 1; mi >= 0; mi-- {
			if pi := slices.IndexFunc(h.t.Msgs[mi].Parts, func(p loom.Part) bool { return p.CallID == l.ToolCallID }); pi >= 0 {
				h.r.spawned[sub] = [2]int{mi, pi}
				break
			}
		}
	}
	h.t.Complete(l.ToolCallID, out, l.IsError, h.at)
}
