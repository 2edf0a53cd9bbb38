package goose

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// The JSON below is goose's Message, the same in a row of the messages
// table (content_json and metadata_json) and a line of a JSONL file
// (role, created, content, metadata in one object): a role (user or
// assistant), a time in seconds, visibility flags, and content, a list
// of items tagged by "type". Only the fields the reader uses are
// declared.

// item is one content item: the union of the item types' fields.
type item struct {
	Type string `json:"type"`

	// text
	Text string `json:"text"`

	// image
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`

	// toolRequest, frontendToolRequest, toolResponse
	ID         string     `json:"id"`
	ToolCall   *toolValue `json:"toolCall"`
	ToolResult *toolValue `json:"toolResult"`

	// thinking
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

// toolValue is goose's ToolResult<T>: {"status": "success", "value": T}
// or {"status": "error", "error": "…"}.
type toolValue struct {
	Status string          `json:"status"`
	Value  json.RawMessage `json:"value"`
	Error  json.RawMessage `json:"error"`
}

// call is a tool call's value.
type call struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// visibility is a message's metadata: whether goose shows it to the
// user and sends it to the model. Both are true when absent.
type visibility struct {
	UserVisible  *bool `json:"userVisible"`
	AgentVisible *bool `json:"agentVisible"`
}

func (v visibility) user() bool  { return v.UserVisible == nil || *v.UserVisible }
func (v visibility) agent() bool { return v.AgentVisible == nil || *v.AgentVisible }

// Item types goose writes that hold nothing of the conversation: a
// request for the user's confirmation and its answer, a notice shown in
// the UI, and the markers of older versions' summarisation.
var bookkeeping = map[string]bool{
	"toolConfirmationRequest": true,
	"actionRequired":          true,
	"systemNotification":      true,
	"conversationCompacted":   true,
	"summarizationRequested":  true,
	"contextLengthExceeded":   true,
}

// source is one goose message before mapping.
type source struct {
	ID      string
	Role    string
	Created time.Time
	Content json.RawMessage
	Meta    visibility
	// Where is how a problem with it is reported: the file and line.
	File string
	Line int
}

// conv builds one session's loom messages from goose's, in order: a
// tool's result, which goose keeps in the user message after the call,
// completes the call's part in the assistant message.
type conv struct {
	res   *importer.Result
	msgs  []*loom.Message
	calls map[string]callRef
	// hidden is whether the message before was hidden from the model:
	// a compaction's summary follows the messages it summarised.
	hidden bool
	model  string
	prov   string
}

type callRef struct{ msg, part int }

func newConv(res *importer.Result, model, provider string) *conv {
	return &conv{res: res, calls: map[string]callRef{}, model: model, prov: provider}
}

// add maps one goose message.
func (c *conv) add(s source) {
	var items []json.RawMessage
	if err := json.Unmarshal(s.Content, &items); err != nil {
		c.res.Problemf(s.File, s.Line, "message "+s.ID+": content is not a list of items: "+importer.Excerpt(err.Error()))
		return
	}
	hiddenBefore := c.hidden
	c.hidden = !s.Meta.agent()
	m := &loom.Message{ID: s.ID, CreatedAt: s.Created}
	switch s.Role {
	case "user":
		m.Role = loom.RoleUser
		if !s.Meta.user() && s.Meta.agent() {
			// What goose put in the model's context itself: a
			// compaction's summary, right after the messages it
			// replaces, or other injected text.
			m.Role = loom.RoleSystem
			if hiddenBefore {
				m.Role = loom.RoleSummary
				m.Usage.Compactions = 1
			}
		}
	case "assistant":
		m.Role = loom.RoleAssistant
		m.Model, m.Provider = c.model, c.prov
		if !s.Meta.user() && s.Meta.agent() {
			// The note goose adds after a compaction's summary.
			m.Role, m.Model, m.Provider = loom.RoleSystem, "", ""
		}
	default:
		c.res.Skip("unknown:" + importer.TypeName(s.Role))
		return
	}
	for i, raw := range items {
		var it item
		if err := json.Unmarshal(raw, &it); err != nil {
			c.res.Problemf(s.File, s.Line, "message "+s.ID+": item "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
			continue
		}
		c.item(s, m, i, &it)
	}
	if len(m.Parts) == 0 {
		// A user message that held tool results only (they went to
		// their calls), or nothing to keep.
		return
	}
	c.msgs = append(c.msgs, m)
}

// item maps one content item of s into m.
func (c *conv) item(s source, m *loom.Message, i int, it *item) {
	id := s.ID + "/" + strconv.Itoa(i)
	switch it.Type {
	case "text":
		if strings.TrimSpace(it.Text) == "" {
			c.res.Skip("empty-text")
			return
		}
		m.Parts = append(m.Parts, loom.Part{ID: id, Type: loom.PartText, Text: it.Text})
	case "thinking", "reasoning":
		text := cmp.Or(it.Thinking, it.Text)
		if text == "" {
			c.res.Skip("empty-reasoning")
			return
		}
		p := loom.Part{ID: id, Type: loom.PartReasoning, Text: text}
		if it.Signature != "" {
			p.Metadata = importer.Meta("signature", it.Signature)
		}
		m.Parts = append(m.Parts, p)
	case "redactedThinking":
		m.Parts = append(m.Parts, loom.Part{ID: id, Type: loom.PartReasoning, Metadata: importer.Meta("redacted_data", it.Data)})
	case "image":
		m.Parts = append(m.Parts, loom.Part{ID: id, Type: loom.PartFile, Mime: it.MimeType, URL: dataURL(it.MimeType, it.Data)})
	case "toolRequest", "frontendToolRequest":
		c.request(s, m, id, it)
	case "toolResponse":
		c.response(s, it)
	case "":
		c.res.Problemf(s.File, s.Line, "message "+s.ID+": item "+strconv.Itoa(i)+" has no type")
	default:
		if bookkeeping[it.Type] {
			c.res.Skip(it.Type)
		} else {
			c.res.Skip("unknown:" + importer.TypeName(it.Type))
		}
	}
}

// request maps a tool call: a running tool part until its result comes.
func (c *conv) request(s source, m *loom.Message, id string, it *item) {
	p := loom.Part{ID: id, Type: loom.PartTool, CallID: cmp.Or(it.ID, id), Status: loom.ToolRunning, Input: json.RawMessage(`{}`)}
	t := s.Created
	if !t.IsZero() {
		p.StartedAt = &t
	}
	if it.Type == "frontendToolRequest" {
		p.Metadata = importer.Meta("frontend", "true")
	}
	tc := it.ToolCall
	var v call
	switch {
	case tc == nil:
		p.Name, p.Status, p.Error = "unknown", loom.ToolError, "goose recorded no call"
	case tc.Status == "success" && json.Unmarshal(tc.Value, &v) == nil && v.Name != "":
		p.Name = v.Name
		if a := importer.CompactJSON(v.Arguments); a != nil && a[0] == '{' {
			p.Input = a
		}
	default:
		// A call the model made that goose could not parse.
		p.Name, p.Status, p.Error = "unknown", loom.ToolError, cmp.Or(errorText(tc.Error), "invalid tool call")
		if v.Name != "" {
			p.Name = v.Name
		}
	}
	if m.Role != loom.RoleAssistant {
		c.res.Skip("tool-request-in-" + m.Role)
		return
	}
	c.calls[p.CallID] = callRef{msg: len(c.msgs), part: len(m.Parts)}
	m.Parts = append(m.Parts, p)
}

// response completes the call it answers with its output or error.
func (c *conv) response(s source, it *item) {
	ref, ok := c.calls[it.ID]
	if !ok || ref.msg >= len(c.msgs) {
		c.res.Skip("orphan-tool-response")
		return
	}
	delete(c.calls, it.ID)
	p := &c.msgs[ref.msg].Parts[ref.part]
	if !s.Created.IsZero() {
		t := s.Created
		p.EndedAt = &t
	}
	tr := it.ToolResult
	if tr == nil {
		p.Status, p.Error = loom.ToolError, "goose recorded no result"
		return
	}
	if tr.Status != "success" {
		p.Status, p.Error = loom.ToolError, cmp.Or(errorText(tr.Error), "error")
		return
	}
	out, isError := resultText(tr.Value)
	b, _ := json.Marshal(out)
	p.Status, p.Output, p.Error = loom.ToolCompleted, b, ""
	if isError {
		p.Status, p.Error = loom.ToolError, cmp.Or(out, "error")
	}
}

// resultText is a tool result's content as text, and whether the tool
// said it failed. The value is an MCP CallToolResult ({content,
// isError}) in recent versions, a list of content items in older ones.
func resultText(raw json.RawMessage) (string, bool) {
	var res struct {
		Content []json.RawMessage `json:"content"`
		IsError bool              `json:"isError"`
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		if json.Unmarshal(raw, &res.Content) != nil {
			return string(raw), false
		}
	} else if json.Unmarshal(raw, &res) != nil {
		return string(raw), false
	}
	var parts []string
	for _, c := range res.Content {
		var ci struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			MimeType string `json:"mimeType"`
			Resource struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			} `json:"resource"`
		}
		if json.Unmarshal(c, &ci) != nil {
			continue
		}
		switch ci.Type {
		case "text":
			parts = append(parts, ci.Text)
		case "resource":
			parts = append(parts, cmp.Or(ci.Resource.Text, ci.Resource.URI))
		default:
			parts = append(parts, "["+importer.TypeName(ci.Type)+cond(ci.MimeType != "", ": "+ci.MimeType)+"]")
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

// finish returns the messages, the session's usage put on its last
// assistant message (see doc.go).
func (c *conv) finish(u loom.Usage) []*loom.Message {
	if u.IsZero() {
		return c.msgs
	}
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if c.msgs[i].Role == loom.RoleAssistant {
			c.msgs[i].Usage = u
			break
		}
	}
	return c.msgs
}

// usage is a session's token counts: goose's accumulated ones when it
// recorded them, else those of its last model call.
func usage(accIn, accOut, in, out *int64) loom.Usage {
	pick := func(a, b *int64) int64 {
		if a != nil {
			return max(*a, 0)
		}
		if b != nil {
			return max(*b, 0)
		}
		return 0
	}
	if accIn != nil || accOut != nil {
		return loom.Usage{InputTokens: pick(accIn, nil), OutputTokens: pick(accOut, nil)}
	}
	return loom.Usage{InputTokens: pick(in, nil), OutputTokens: pick(out, nil)}
}

func dataURL(mime, data string) string {
	if data == "" {
		return ""
	}
	return "data:" + cmp.Or(mime, "application/octet-stream") + ";base64," + data
}

// errorText is goose's error: a string, or anything else as JSON.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(importer.CompactJSON(raw))
}

func cond(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

// seconds turns goose's created time (seconds since the epoch; a value
// too large for seconds is taken as milliseconds) into a time, the zero
// time for none or nonsense.
func seconds(v float64) time.Time { return importer.UnixTime(v) }

// timeLayouts are how SQLite's CURRENT_TIMESTAMP and sqlx's chrono
// encoding write the sessions table's times.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
}

// parseTime reads a sessions table time, the zero time when it is none
// of goose's forms.
func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
