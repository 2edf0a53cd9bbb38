package qwen

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// converter turns the records along a session's path into messages.
type converter struct {
	*chat
	msgs []*loom.Message
	// calls are the tool parts waiting for their results, by call id.
	calls map[string]*loom.Part
}

// reminder starts the text Qwen Code adds to a prompt of its own accord
// (the skills it has, an agent it restored): context, not what the user
// typed.
const reminder = "<system-reminder>"

// record converts one record on the path.
func (c *converter) record(nd *node, s *importer.Session) {
	r := nd.r
	switch r.Type {
	case "user":
		role := loom.RoleUser
		if r.Subtype != "" {
			// A notification (a background agent finished) or another
			// message Qwen Code wrote in the user's turn.
			role = loom.RoleSystem
		}
		c.content(nd, role, func(p part) bool { return p.Text != nil && strings.HasPrefix(strings.TrimSpace(*p.Text), reminder) })
	case "assistant":
		c.assistant(nd)
	case "tool_result":
		c.toolResult(nd)
	case "system":
		c.system(nd, s)
	default:
		c.res.Skip("unknown:" + importer.TypeName(r.Type))
	}
}

// msg starts a message of a record.
func (c *converter) msg(nd *node, role string) *loom.Message {
	t := nd.ts
	return &loom.Message{ID: nd.r.UUID, Role: role, CreatedAt: t, CompletedAt: &t}
}

// add appends m when it has parts; an empty one is counted as skipped.
func (c *converter) add(m *loom.Message) {
	if len(m.Parts) == 0 {
		c.res.Skip(m.Role + ":empty")
		return
	}
	c.msgs = append(c.msgs, m)
}

func (c *converter) partID(m *loom.Message) string {
	return m.ID + "/" + strconv.Itoa(len(m.Parts))
}

// content converts a message's text, images and files; parts drop
// leaves out (counted as skipped).
func (c *converter) content(nd *node, role string, drop func(part) bool) {
	m := c.msg(nd, role)
	if nd.r.Message == nil {
		c.res.Problemf(c.path, nd.n, nd.r.Type+" record without a message")
		return
	}
	for _, p := range nd.r.Message.Parts {
		if drop != nil && drop(p) {
			c.res.Skip(role + ":system-reminder")
			continue
		}
		c.plain(m, p)
	}
	c.add(m)
}

// plain adds a part that is text, an image or a file to m; any other is
// counted as skipped.
func (c *converter) plain(m *loom.Message, p part) {
	switch {
	case p.Text != nil && p.Thought:
		if strings.TrimSpace(*p.Text) != "" {
			m.Parts = append(m.Parts, loom.Part{ID: c.partID(m), Type: loom.PartReasoning, Text: *p.Text})
		}
	case p.Text != nil:
		if strings.TrimSpace(*p.Text) != "" {
			m.Parts = append(m.Parts, loom.Part{ID: c.partID(m), Type: loom.PartText, Text: *p.Text})
		}
	case p.InlineData != nil:
		mime := p.InlineData.MimeType
		if mime == "" {
			mime = "application/octet-stream"
		}
		m.Parts = append(m.Parts, loom.Part{ID: c.partID(m), Type: loom.PartFile, Mime: mime, URL: "data:" + mime + ";base64," + p.InlineData.Data})
	case p.FileData != nil:
		m.Parts = append(m.Parts, loom.Part{ID: c.partID(m), Type: loom.PartFile, Mime: p.FileData.MimeType, URL: p.FileData.FileURI})
	default:
		c.res.Skip("part:other")
	}
}

// assistant converts a reply: thoughts, text and function calls, its
// model and usage.
func (c *converter) assistant(nd *node) {
	r := nd.r
	if r.Message == nil {
		c.res.Problemf(c.path, nd.n, "assistant record without a message")
		return
	}
	m := c.msg(nd, loom.RoleAssistant)
	m.Model = r.Model
	// A record without usage right after an assistant record holds the
	// rest of the same model response (Qwen Code records a sub-agent's
	// text and its function calls as two records): no call of its own.
	if r.UsageMetadata != nil || nd.parent < 0 || c.nodes[nd.parent].r.Type != "assistant" {
		m.Usage.APICalls = 1
	}
	if u := r.UsageMetadata; u != nil {
		// Qwen Code records an OpenAI-compatible reply's
		// completion_tokens, which hold its reasoning, as the candidates.
		cached := importer.Count(u.Cached)
		m.Usage.InputTokens = max(0, importer.Count(u.Prompt)-cached)
		m.Usage.CacheReadTokens = cached
		m.Usage.OutputTokens = importer.Count(u.Candidates)
		m.Usage.ReasoningTokens = importer.Count(u.Thoughts)
	}
	for _, p := range r.Message.Parts {
		if p.FunctionCall == nil {
			c.plain(m, p)
			continue
		}
		fc := p.FunctionCall
		start := m.CreatedAt
		tp := loom.Part{ID: c.partID(m), Type: loom.PartTool, CallID: fc.ID, Name: fc.Name, Status: loom.ToolPending, Input: importer.ArgsObject(fc.Args), StartedAt: &start}
		if tp.CallID == "" {
			tp.CallID = tp.ID
		}
		if tp.Name == "" {
			c.res.Problemf(c.path, nd.n, "function call "+importer.Clip(tp.CallID, 64)+" without a name")
			tp.Name = "unknown"
		}
		m.Parts = append(m.Parts, tp)
	}
	if len(m.Parts) == 0 {
		c.res.Skip("assistant:empty")
		return
	}
	c.msgs = append(c.msgs, m)
	for i := range m.Parts {
		if p := &m.Parts[i]; p.Type == loom.PartTool {
			if old := c.calls[p.CallID]; old != nil {
				old.Status, old.Error = loom.ToolError, loom.Interrupted
			}
			c.calls[p.CallID] = p
		}
	}
}

// toolResult completes the tool parts of the function responses it
// holds.
func (c *converter) toolResult(nd *node) {
	r := nd.r
	if r.Message == nil {
		c.res.Problemf(c.path, nd.n, "tool_result record without a message")
		return
	}
	for _, p := range r.Message.Parts {
		fr := p.FunctionResponse
		if fr == nil {
			c.res.Skip("tool_result:part")
			continue
		}
		tp := c.calls[fr.ID]
		if tp == nil {
			c.res.Skip("tool_result:unmatched")
			continue
		}
		delete(c.calls, fr.ID)
		end := nd.ts
		if tp.StartedAt != nil && end.Before(*tp.StartedAt) {
			end = *tp.StartedAt
		}
		tp.EndedAt = &end
		var resp struct {
			Output json.RawMessage `json:"output"`
			Error  json.RawMessage `json:"error"`
		}
		json.Unmarshal(fr.Response, &resp)
		failed := len(resp.Error) > 0 && string(resp.Error) != "null" || r.ToolCallResult != nil && r.ToolCallResult.Status == "error"
		out := importer.JSONText(resp.Output)
		if len(resp.Output) == 0 {
			out = importer.JSONText(fr.Response)
		}
		if failed {
			tp.Status, tp.Error = loom.ToolError, importer.JSONText(resp.Error)
			if tp.Error == "" {
				tp.Error = out
			}
			if tp.Error == "" {
				tp.Error = "the tool failed"
			}
			continue
		}
		tp.Status = loom.ToolCompleted
		tp.Output, _ = json.Marshal(out)
	}
}

// system converts the system records loom keeps: a compression's summary
// and the session's title; the others (telemetry, snapshots) are counted
// as skipped by subtype.
func (c *converter) system(nd *node, s *importer.Session) {
	r := nd.r
	switch r.Subtype {
	case "chat_compression":
		var p struct {
			Info              json.RawMessage `json:"info"`
			CompressedHistory []struct {
				Role  string `json:"role"`
				Parts []part `json:"parts"`
			} `json:"compressedHistory"`
		}
		if err := json.Unmarshal(r.SystemPayload, &p); err != nil {
			c.res.Problemf(c.path, nd.n, "chat_compression without its payload: "+err.Error())
			return
		}
		// The history the model goes on with: the summary (a user turn)
		// and its acknowledgement.
		var b strings.Builder
		for _, h := range p.CompressedHistory {
			if h.Role != "user" {
				continue
			}
			for _, q := range h.Parts {
				if q.Text != nil && !strings.HasPrefix(strings.TrimSpace(*q.Text), reminder) {
					if b.Len() > 0 {
						b.WriteString("\n\n")
					}
					b.WriteString(strings.TrimSpace(*q.Text))
				}
			}
			break
		}
		m := c.msg(nd, loom.RoleSummary)
		m.Usage.Compactions = 1
		text := b.String()
		if text == "" {
			text = "(the conversation was compressed)"
		}
		part := loom.Part{ID: m.ID + "/0", Type: loom.PartText, Text: text}
		if info := bytes.TrimSpace(p.Info); len(info) > 0 && len(info) <= 8<<10 && json.Valid(info) {
			part.Metadata = info
		}
		m.Parts = []loom.Part{part}
		c.msgs = append(c.msgs, m)
	case "custom_title":
		var p struct {
			CustomTitle string `json:"customTitle"`
		}
		if json.Unmarshal(r.SystemPayload, &p) == nil && strings.TrimSpace(p.CustomTitle) != "" {
			s.Title = strings.TrimSpace(p.CustomTitle)
		}
		c.res.Skip("system:custom_title")
	default:
		c.res.Skip("system:" + importer.TypeName(r.Subtype))
	}
}

// finish marks the calls left without a result: the last reply's may
// still be running; an earlier one's never got one.
func (c *converter) finish() {
	var last *loom.Message
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if c.msgs[i].Role == loom.RoleAssistant {
			last = c.msgs[i]
			break
		}
	}
	for _, p := range c.calls {
		p.Status, p.Error = loom.ToolError, loom.Interrupted
		if last != nil {
			for i := range last.Parts {
				if &last.Parts[i] == p {
					p.Error = importer.NoResult
				}
			}
		}
	}
}
