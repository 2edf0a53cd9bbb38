package gemini

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// converter turns a recording's messages into loom messages.
type converter struct {
	r   *reader
	rec *recording
	// sourceID is the session's SourceID; sub-agent sessions it ran are
	// named <sourceID>/<agent id>.
	sourceID string
	msgs     []*loom.Message
	// calls finds a tool part by call id, to fold results into it.
	calls map[string]callRef
	// count is whether skips and problems are counted for the message
	// being converted: a message shared by a branch and its parent
	// counts once.
	count bool
	prev  time.Time
	// from[i] is the index in msgs of the first message converted from
	// node i (len(msgs) when node i gave none).
	from []int
}

type callRef struct {
	msg *loom.Message
	i   int
	// open is whether the call's record had no result, so that a later
	// function response brings it.
	open bool
}

func (r *reader) converter(rec *recording, sourceID string) *converter {
	return &converter{r: r, rec: rec, sourceID: sourceID, calls: map[string]callRef{}}
}

// convert converts nodes; skips and problems are counted from node
// countFrom on.
func (c *converter) convert(nodes []*node, countFrom int) []*loom.Message {
	c.from = make([]int, len(nodes)+1)
	for i, n := range nodes {
		c.from[i] = len(c.msgs)
		c.count = i >= countFrom
		c.add(n.msg)
	}
	c.from[len(nodes)] = len(c.msgs)
	return c.msgs
}

func (c *converter) skip(name string) {
	if c.count {
		c.r.skip(name)
	}
}

func (c *converter) problem(m *message, reason string) {
	if c.count {
		c.r.problem(c.rec.path, m.line, reason)
	}
}

// time parses a message's timestamp; a message without one takes the time
// of the message before it.
func (c *converter) time(m *message, s string) time.Time {
	if s == "" {
		return c.prev
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		c.problem(m, "bad timestamp "+strconv.Quote(trim(s)))
		return c.prev
	}
	return t
}

func trim(s string) string {
	if len(s) > maxNameLen {
		return strings.ToValidUTF8(s[:maxNameLen], "?") + "…"
	}
	return s
}

func (c *converter) id(m *message) string {
	if m.ID != "" {
		return m.ID
	}
	return c.rec.sessionID + ":" + m.pos
}

func (c *converter) add(m *message) {
	t := c.time(m, m.Timestamp)
	if !t.IsZero() {
		c.prev = t
	}
	switch m.Type {
	case "user":
		c.user(m, t)
	case "gemini":
		c.gemini(m, t)
	case "info", "error", "warning":
		c.notice(m, t)
	default:
		c.skip(skipName("unknown:", m.Type))
	}
}

func (c *converter) emit(id, role string, t time.Time, ps []loom.Part) *loom.Message {
	for i := range ps {
		ps[i].ID = id + "/" + strconv.Itoa(i)
	}
	m := &loom.Message{ID: id, Role: role, Parts: ps, CreatedAt: t}
	c.msgs = append(c.msgs, m)
	return m
}

// contentParts decodes a message's content, reporting what cannot be read.
func (c *converter) contentParts(m *message, raw json.RawMessage, field string) []part {
	ps, err := parts(raw)
	if err != nil {
		c.problem(m, field+": "+err.Error())
	}
	return ps
}

// file is the file part of a part of inline data (as a data: URL) or of
// a file's data (its URI).
func (p *part) file() loom.Part {
	if p.InlineData != nil {
		return loom.Part{Type: loom.PartFile, Mime: p.InlineData.MimeType, URL: "data:" + p.InlineData.MimeType + ";base64," + p.InlineData.Data}
	}
	return loom.Part{Type: loom.PartFile, Mime: p.FileData.MimeType, URL: p.FileData.FileURI}
}

// userParts turns the parts a user sent into text and file parts, folding
// function responses into the tool parts of their calls.
// A response in what was displayed only is a copy: one with no call is
// not counted as an orphan.
func (c *converter) userParts(ps []part, t time.Time, display bool) []loom.Part {
	var out []loom.Part
	for _, p := range ps {
		switch {
		case p.FunctionResponse != nil:
			c.fold(p.FunctionResponse, t, !display)
		case p.Text != nil:
			if *p.Text == "" {
				continue
			}
			typ := loom.PartText
			if p.Thought {
				typ = loom.PartReasoning
			}
			out = append(out, loom.Part{Type: typ, Text: *p.Text})
		case p.InlineData != nil || p.FileData != nil:
			out = append(out, p.file())
		case p.FunctionCall != nil:
			c.skip("part:functionCall")
		default:
			c.skip(skipName("part:", p.other))
		}
	}
	return out
}

// Texts Gemini CLI sends as the user without the user typing them.
var (
	injectedPrefixes = []string{
		"<session_context>",
		"This is the Gemini CLI. We are setting up the context for our chat.",
	}
	injectedTexts = []string{"System: Please continue."}
	summaryPrefix = "<state_snapshot>"
	// compressionAck is the reply Gemini CLI writes in the model's name
	// after a compression's summary; the model never said it.
	compressionAck = "Got it. Thanks for the additional context!"
)

// isCompressionAck is whether m is the reply Gemini CLI puts after a
// compression's summary: that text alone, no thoughts, tool calls or
// usage, right after the summary.
func (c *converter) isCompressionAck(m *message) bool {
	if len(m.Thoughts) > 0 || len(m.ToolCalls) > 0 || m.Tokens != nil || len(c.msgs) == 0 || c.msgs[len(c.msgs)-1].Role != loom.RoleSummary {
		return false
	}
	ps, err := parts(m.Content)
	return err == nil && strings.TrimSpace(text(ps)) == compressionAck && len(ps) == 1
}

// userRole tells a prompt the user typed from context Gemini CLI sent in
// the user's name, and from the summary that replaces a compressed
// conversation.
func userRole(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, summaryPrefix) {
		return loom.RoleSummary
	}
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(s, p) {
			return loom.RoleSystem
		}
	}
	for _, p := range injectedTexts {
		if s == p {
			return loom.RoleSystem
		}
	}
	return loom.RoleUser
}

// user converts a user record. content is what the model was sent;
// displayContent, when present, is what the user typed (a slash command
// that expanded into a long prompt, say). What the user typed is the user
// message; what was sent besides is a system message after it. A record
// whose display holds no text was not typed at all (a continuation the
// CLI sent after a tool): its content is a system message.
func (c *converter) user(m *message, t time.Time) {
	id := c.id(m)
	content := c.contentParts(m, m.Content, "content")
	if importer.IsNull(m.DisplayContent) {
		ps := c.userParts(content, t, false)
		if len(ps) == 0 {
			if !hasResponse(content) {
				c.skip("empty:user")
			}
			return
		}
		m := c.emit(id, userRole(text(content)), t, ps)
		if m.Role == loom.RoleSummary {
			m.Usage.Compactions = 1
		}
		return
	}
	display := c.contentParts(m, m.DisplayContent, "displayContent")
	sent := c.userParts(content, t, false)
	typed := c.userParts(display, t, true)
	if text(display) == "" {
		if len(sent) > 0 {
			c.emit(id, loom.RoleSystem, t, sent)
		} else if !hasResponse(content) && !hasResponse(display) {
			c.skip("empty:user")
		}
		return
	}
	c.emit(id, loom.RoleUser, t, typed)
	if st := text(content); st != "" && strings.TrimSpace(st) != strings.TrimSpace(text(display)) {
		c.emit(id+"/content", loom.RoleSystem, t, sent)
	}
}

func hasResponse(ps []part) bool {
	for _, p := range ps {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// notice converts what the CLI showed the user (info, error, warning)
// into a system message.
func (c *converter) notice(m *message, t time.Time) {
	ps := c.userParts(c.contentParts(m, m.Content, "content"), t, false)
	if len(ps) == 0 {
		c.skip("empty:" + m.Type)
		return
	}
	c.emit(c.id(m), loom.RoleSystem, t, ps)
}

// gemini converts a model reply: its thoughts, its text, its tool calls
// with their results, and its token usage.
func (c *converter) gemini(m *message, t time.Time) {
	id := c.id(m)
	if c.isCompressionAck(m) {
		c.emit(id, loom.RoleSystem, t, []loom.Part{{Type: loom.PartText, Text: compressionAck}})
		return
	}
	var ps []loom.Part
	for _, th := range m.Thoughts {
		if s := thoughtText(th); s != "" {
			ps = append(ps, loom.Part{Type: loom.PartReasoning, Text: s})
		}
	}
	var calls []*functionCall
	for _, p := range c.contentParts(m, m.Content, "content") {
		switch {
		case p.Text != nil:
			if *p.Text == "" {
				continue
			}
			typ := loom.PartText
			if p.Thought {
				if len(m.Thoughts) > 0 {
					// After a resume Gemini CLI writes the reply
					// again from the model's history, its thoughts
					// as text parts beside the thoughts it kept.
					c.skip("part:thought:duplicate")
					continue
				}
				typ = loom.PartReasoning
			}
			ps = append(ps, loom.Part{Type: typ, Text: *p.Text})
		case p.FunctionCall != nil:
			calls = append(calls, p.FunctionCall)
		case p.InlineData != nil || p.FileData != nil:
			ps = append(ps, p.file())
		case p.FunctionResponse != nil:
			c.skip("part:functionResponse")
		default:
			c.skip(skipName("part:", p.other))
		}
	}
	recorded := map[string]bool{}
	for i, tc := range m.ToolCalls {
		p := c.toolPart(m, id, i, tc, t)
		recorded[p.CallID] = true
		ps = append(ps, p)
		if tc.AgentID != "" {
			ps = append(ps, loom.Part{Type: loom.PartAgent, Name: agentName(p.Name, p.Input), SessionID: oneLine(c.sourceID + "/" + tc.AgentID)})
		}
	}
	// Calls in the content that the record has no tool call for: their
	// results, if any, come in a later user record.
	for i, fc := range calls {
		callID := fc.ID
		if callID == "" {
			callID = id + "/call-" + strconv.Itoa(i)
		}
		if recorded[callID] {
			continue
		}
		recorded[callID] = true
		name := fc.Name
		if name == "" {
			name = "unknown"
		}
		start := t
		ps = append(ps, loom.Part{Type: loom.PartTool, CallID: callID, Name: name, Status: loom.ToolRunning, Input: input(fc.Args), StartedAt: &start})
	}
	u := usage(m.Tokens)
	if len(ps) == 0 && u.IsZero() {
		c.skip("empty:gemini")
		return
	}
	msg := c.emit(id, loom.RoleAssistant, t, ps)
	msg.Model = m.Model
	msg.Provider = Provider
	msg.Usage = u
	if !t.IsZero() {
		done := t
		msg.CompletedAt = &done
	}
	for i := range msg.Parts {
		if p := &msg.Parts[i]; p.Type == loom.PartTool {
			c.calls[p.CallID] = callRef{msg: msg, i: i, open: len(p.Output) == 0}
		}
	}
}

// thoughtText is a thought summary as the model wrote it: a bold subject
// and its description.
func thoughtText(th thought) string {
	s, d := strings.TrimSpace(th.Subject), strings.TrimSpace(th.Description)
	switch {
	case s == "":
		return d
	case d == "":
		return "**" + s + "**"
	}
	return "**" + s + "**\n\n" + d
}

// usage converts a reply's tokens to loom's counts, where input,
// cache-read and cache-write tokens do not overlap and output includes
// reasoning.
func usage(t *tokens) loom.Usage {
	if t == nil {
		return loom.Usage{}
	}
	cached := clamp(t.Cached)
	in := clamp(t.Input)
	return loom.Usage{
		InputTokens:     max(0, in-cached) + clamp(t.Tool),
		OutputTokens:    clamp(t.Output) + clamp(t.Thoughts),
		ReasoningTokens: clamp(t.Thoughts),
		CacheReadTokens: cached,
		APICalls:        1,
	}
}

// clamp keeps a count from a file within what a sum cannot overflow.
func clamp(n int64) int64 {
	return min(max(n, 0), 1<<48)
}
