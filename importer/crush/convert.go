package crush

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// A message's parts column is Crush's list of wrapped parts,
// [{"type": "text", "data": {…}}, …], of the types below; only the
// fields the reader uses are declared.

type wrapped struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

type partData struct {
	// text
	Text   string `json:"text"`
	Hidden bool   `json:"hidden"`
	// reasoning
	Thinking   string `json:"thinking"`
	Signature  string `json:"signature"`
	StartedAt  int64  `json:"started_at"`
	FinishedAt int64  `json:"finished_at"`
	// image_url
	URL string `json:"url"`
	// binary (Go's field names: Crush declares no JSON names)
	Path     string `json:"Path"`
	MIMEType string `json:"MIMEType"`
	Data     []byte `json:"Data"`
	// tool_call
	ID       string `json:"id"`
	Name     string `json:"name"`
	Input    string `json:"input"`
	Finished bool   `json:"finished"`
	// tool_result
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
	Metadata   string `json:"metadata"`
	IsError    bool   `json:"is_error"`
	ResultMIME string `json:"mime_type"`
	// finish
	Reason  string `json:"reason"`
	Time    int64  `json:"time"`
	Message string `json:"message"`
	Details string `json:"details"`
}

// record is one row of the messages table.
type record struct {
	ID, Role, Model, Provider  string
	Created, Updated, Finished time.Time
	Summary                    bool
	Parts                      []byte
}

// converter builds one session's messages: a tool result, which Crush
// keeps in a message of role tool after the call, completes the call's
// part.
type converter struct {
	res   *importer.Result
	path  string
	msgs  []*loom.Message
	calls map[string]callRef
}

type callRef struct{ msg, part int }

func newConverter(res *importer.Result, path string) *converter {
	return &converter{res: res, path: path, calls: map[string]callRef{}}
}

func (c *converter) problem(id, reason string) {
	c.res.Problemf(c.path, 0, "message "+importer.Clip(id, 80)+": "+reason)
}

// add maps one message.
func (c *converter) add(r record) {
	var parts []wrapped
	if err := json.Unmarshal(r.Parts, &parts); err != nil {
		c.problem(r.ID, "parts are not a list: "+importer.Excerpt(err.Error()))
		return
	}
	if !utf8.Valid(r.Parts) {
		c.problem(r.ID, importer.NotUTF8)
	}
	m := &loom.Message{ID: r.ID, CreatedAt: r.Created}
	switch r.Role {
	case "user":
		m.Role = loom.RoleUser
	case "assistant":
		m.Role, m.Model, m.Provider = loom.RoleAssistant, r.Model, r.Provider
		if r.Summary {
			m.Role = loom.RoleSummary
			m.Usage.Compactions = 1
		}
	case "system":
		m.Role = loom.RoleSystem
	case "tool":
		// Results only: each completes its call.
	default:
		c.res.Skip("unknown:" + importer.TypeName(r.Role))
		return
	}
	done := r.Finished
	for i, w := range parts {
		var d partData
		if len(w.Data) > 0 && json.Unmarshal(w.Data, &d) != nil {
			c.problem(r.ID, "part "+strconv.Itoa(i)+" is not Crush's")
			continue
		}
		id := r.ID + "/" + strconv.Itoa(i)
		switch w.Type {
		case "text":
			if strings.TrimSpace(d.Text) == "" {
				c.res.Skip("empty-text")
				continue
			}
			p := loom.Part{ID: id, Type: loom.PartText, Text: d.Text}
			if d.Hidden {
				p.Metadata = importer.Meta("hidden", "true")
			}
			m.Parts = append(m.Parts, p)
		case "reasoning":
			if d.Thinking == "" {
				c.res.Skip("empty-reasoning")
				continue
			}
			p := loom.Part{ID: id, Type: loom.PartReasoning, Text: d.Thinking}
			if d.Signature != "" {
				p.Metadata = importer.Meta("signature", d.Signature)
			}
			m.Parts = append(m.Parts, p)
		case "image_url":
			m.Parts = append(m.Parts, loom.Part{ID: id, Type: loom.PartFile, URL: d.URL})
		case "binary":
			p := loom.Part{ID: id, Type: loom.PartFile, Mime: d.MIMEType, Filename: d.Path}
			if len(d.Data) > 0 {
				p.URL = "data:" + cmp.Or(d.MIMEType, "application/octet-stream") + ";base64," + base64.StdEncoding.EncodeToString(d.Data)
			}
			m.Parts = append(m.Parts, p)
		case "tool_call":
			c.call(r, m, id, d)
		case "tool_result":
			c.result(r, d)
		case "finish":
			if t := unixTime(float64(d.Time)); !t.IsZero() {
				done = t
			}
			if d.Reason == "error" && d.Message != "" {
				m.Parts = append(m.Parts, loom.Part{ID: id, Type: loom.PartText, Text: "Error: " + d.Message + cond(d.Details != "", "\n"+d.Details), Metadata: importer.Meta("finish", d.Reason)})
			}
		case "":
			c.problem(r.ID, "part "+strconv.Itoa(i)+" has no type")
		default:
			c.res.Skip("unknown:" + importer.TypeName(w.Type))
		}
	}
	if r.Role == "tool" || len(m.Parts) == 0 {
		return
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = r.Updated
	}
	end := cmp.Or(done, r.Updated, m.CreatedAt)
	if end.Before(m.CreatedAt) {
		end = m.CreatedAt
	}
	m.CompletedAt = &end
	c.msgs = append(c.msgs, m)
}

// call maps a tool call: running until its result comes.
func (c *converter) call(r record, m *loom.Message, id string, d partData) {
	if m.Role != loom.RoleAssistant && m.Role != loom.RoleSummary {
		c.res.Skip("tool-call-in-" + importer.TypeName(r.Role))
		return
	}
	p := loom.Part{ID: id, Type: loom.PartTool, CallID: cmp.Or(d.ID, id), Name: cmp.Or(d.Name, "unknown"), Status: loom.ToolRunning, Input: json.RawMessage(`{}`)}
	if in := importer.CompactJSON(json.RawMessage(d.Input)); in != nil && in[0] == '{' {
		p.Input = in
	} else if strings.TrimSpace(d.Input) != "" {
		b, _ := json.Marshal(map[string]string{"input": d.Input})
		p.Input = b
	}
	if !r.Created.IsZero() {
		t := r.Created
		p.StartedAt = &t
	}
	if _, dup := c.calls[p.CallID]; dup {
		c.res.Skip("duplicate-tool-call")
		return
	}
	c.calls[p.CallID] = callRef{msg: len(c.msgs), part: len(m.Parts)}
	m.Parts = append(m.Parts, p)
}

// result completes the call it answers.
func (c *converter) result(r record, d partData) {
	ref, ok := c.calls[d.ToolCallID]
	if !ok || ref.msg >= len(c.msgs) {
		c.res.Skip("orphan-tool-result")
		return
	}
	p := &c.msgs[ref.msg].Parts[ref.part]
	if p.Status != loom.ToolRunning {
		c.res.Skip("duplicate-tool-result")
		return
	}
	if t := cmp.Or(r.Created, r.Updated); !t.IsZero() {
		p.EndedAt = &t
	}
	out := d.Content
	if out == "" && d.ResultMIME != "" {
		out = "[" + d.ResultMIME + "]"
	}
	b, _ := json.Marshal(out)
	p.Output, p.Status = b, loom.ToolCompleted
	if d.IsError {
		p.Status, p.Error = loom.ToolError, cmp.Or(out, "error")
	}
	if md := bytes.TrimSpace([]byte(d.Metadata)); len(md) > 0 && md[0] == '{' && json.Valid(md) {
		p.Metadata = importer.CompactJSON(md)
	}
}

// linkAgent names the sub-agent session sub in the message of the call
// that ran it.
func (c *converter) linkAgent(call, sub string) {
	if ref, ok := c.calls[call]; ok && ref.msg < len(c.msgs) {
		m := c.msgs[ref.msg]
		importer.AddAgentPart(m, m.Parts[ref.part], sub)
	}
}

// finish returns the messages, the session's usage on its last reply:
// Crush records usage per session only.
func (c *converter) finish(u loom.Usage) []*loom.Message {
	if u.IsZero() {
		return c.msgs
	}
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if c.msgs[i].Role == loom.RoleAssistant {
			c.msgs[i].Usage.Add(u)
			break
		}
	}
	return c.msgs
}

func cond(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}
