package chatgpt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// converter turns a path of nodes into loom messages.
type converter struct {
	s    *importer.Session
	res  *importer.Result // nil: a fork's copy, whose skips are counted once
	out  []*loom.Message
	cur  *loom.Message // the assistant message the replies and tools go to
	now  time.Time
	open map[string]int  // the index of each tool call waiting for its result in cur
	used map[string]bool // message ids given
}

func convert(s *importer.Session, path []keyed, res *importer.Result) []*loom.Message {
	cv := &converter{s: s, res: res, now: s.CreatedAt, used: map[string]bool{}}
	for _, n := range path {
		if n.Message != nil {
			cv.node(n.key, n.Message)
		}
	}
	return cv.out
}

// node converts one message.
func (cv *converter) node(key string, m *message) {
	if !m.CreateTime.t.IsZero() {
		cv.now = m.CreateTime.t
	}
	role, ct := m.Author.Role, m.Content.ContentType
	if m.Metadata.Hidden || (m.Weight != nil && *m.Weight == 0) {
		cv.res.Skip("hidden:" + role)
		return
	}
	switch role {
	case "user", "system":
		cv.cur = nil
		r := loom.RoleUser
		if role == "system" || ct == "user_editable_context" {
			r = loom.RoleSystem
		}
		msg := cv.message(key, m, r)
		cv.content(msg, m)
		for _, a := range m.Metadata.Attachments {
			importer.AddPart(msg, loom.Part{Type: loom.PartFile, Filename: a.Name, Mime: a.MimeType, URL: fileURL(a.ID)})
		}
		if len(msg.Parts) == 0 {
			cv.out = cv.out[:len(cv.out)-1]
			cv.res.Skip("empty:" + role)
		}
	case "assistant":
		msg := cv.assistant(key, m)
		if r := m.Recipient; r != "" && r != "all" {
			cv.call(msg, m, r)
			return
		}
		switch ct {
		case "thoughts":
			for _, t := range m.Content.Thoughts {
				text := strings.TrimSpace(strings.TrimSpace(t.Summary) + "\n\n" + strings.TrimSpace(t.Content))
				if text != "" {
					importer.AddPart(msg, loom.Part{Type: loom.PartReasoning, Text: text})
				}
			}
		case "reasoning_recap":
			cv.res.Skip("reasoning_recap")
		case "model_editable_context":
			cv.res.Skip("model_editable_context")
		default:
			cv.content(msg, m)
		}
		cv.drop(msg)
	case "tool":
		msg := cv.assistant(key, m)
		cv.result(msg, m)
		cv.drop(msg)
	default:
		cv.res.Skip("unknown:role:" + importer.TypeName(role))
	}
}

// drop removes msg when it was made for m and got nothing.
func (cv *converter) drop(msg *loom.Message) {
	if len(msg.Parts) == 0 && cv.out[len(cv.out)-1] == msg {
		cv.out = cv.out[:len(cv.out)-1]
		cv.cur = nil
	}
}

// message starts a message of role for node key.
func (cv *converter) message(key string, m *message, role string) *loom.Message {
	id := oneLine(m.ID)
	if id == "" {
		id = oneLine(key)
	}
	if id == "" || cv.used[id] {
		id = fmt.Sprintf("%s:%d", cv.s.SourceID, len(cv.out)+1)
	}
	cv.used[id] = true
	t := cv.now
	msg := &loom.Message{ID: id, Role: role, CreatedAt: t, CompletedAt: &t}
	cv.out = append(cv.out, msg)
	return msg
}

// assistant is the assistant message a reply or a tool's result of
// node key goes to: one model turn's thoughts, calls, results and text
// are one message.
func (cv *converter) assistant(key string, m *message) *loom.Message {
	if cv.cur == nil {
		cv.cur = cv.message(key, m, loom.RoleAssistant)
		cv.cur.Provider = Provider
		cv.open = map[string]int{}
	}
	if m.Metadata.ModelSlug != "" {
		cv.cur.Model = m.Metadata.ModelSlug
	}
	if cv.now.After(*cv.cur.CompletedAt) {
		t := cv.now
		cv.cur.CompletedAt = &t
	}
	return cv.cur
}

// content adds the text, images and code of m to msg.
func (cv *converter) content(msg *loom.Message, m *message) {
	c := &m.Content
	switch c.ContentType {
	case "user_editable_context":
		text := strings.TrimSpace(strings.TrimSpace(c.UserProfile) + "\n\n" + strings.TrimSpace(c.UserInstructions))
		cv.text(msg, text)
		return
	case "code", "execution_output", "system_error":
		cv.text(msg, c.Text)
		return
	case "tether_browsing_display":
		cv.text(msg, c.Result)
		return
	case "tether_quote":
		cv.text(msg, strings.TrimSpace(c.Title+"\n"+c.URL+"\n\n"+c.Text))
		return
	}
	if len(c.Parts) == 0 && c.Text != "" {
		cv.text(msg, c.Text)
		return
	}
	for _, raw := range c.Parts {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			cv.text(msg, s)
			continue
		}
		var obj struct {
			ContentType  string `json:"content_type"`
			AssetPointer string `json:"asset_pointer"`
			Text         string `json:"text"`
		}
		if json.Unmarshal(raw, &obj) != nil {
			cv.res.Skip("part:unknown")
			continue
		}
		switch {
		case obj.AssetPointer != "":
			mime := ""
			if strings.HasPrefix(obj.ContentType, "image") {
				mime = "image/*"
			}
			importer.AddPart(msg, loom.Part{Type: loom.PartFile, Mime: mime, URL: obj.AssetPointer, Filename: obj.AssetPointer})
		case obj.Text != "":
			cv.text(msg, obj.Text)
		default:
			cv.res.Skip("part:" + importer.TypeName(obj.ContentType))
		}
	}
}

func (cv *converter) text(msg *loom.Message, s string) {
	if strings.TrimSpace(s) != "" {
		importer.AddPart(msg, loom.Part{Type: loom.PartText, Text: s})
	}
}

// call adds the tool call an assistant message m addresses to its
// recipient (python, browser, dalle.text2im, a GPT's action) to msg.
func (cv *converter) call(msg *loom.Message, m *message, recipient string) {
	text := m.Content.Text
	if text == "" {
		var parts []string
		for _, raw := range m.Content.Parts {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				parts = append(parts, s)
			}
		}
		text = strings.Join(parts, "\n")
	}
	var buf bytes.Buffer
	input := []byte(strings.TrimSpace(text))
	if bytes.HasPrefix(input, []byte("{")) && json.Compact(&buf, input) == nil {
		input = buf.Bytes()
	} else {
		key := "input"
		if m.Content.ContentType == "code" {
			key = "code"
		}
		input, _ = json.Marshal(map[string]string{key: text})
	}
	t := cv.now
	i := importer.AddPart(msg, loom.Part{Type: loom.PartTool, CallID: msg.ID + "/" + strconv.Itoa(len(msg.Parts)), Name: recipient, Status: loom.ToolRunning, Input: input, StartedAt: &t})
	cv.open[recipient] = i
}

// result adds a tool's message m to the call it answers in msg, or as
// a call of its own when none waits for it.
func (cv *converter) result(msg *loom.Message, m *message) {
	name := m.Author.Name
	if name == "" {
		name = "tool"
	}
	i, ok := cv.open[name]
	if !ok {
		for k, j := range cv.open {
			if !ok || j > i {
				i, ok, name = j, true, k
			}
		}
	}
	var out strings.Builder
	files := &loom.Message{ID: msg.ID}
	tmp := &converter{res: cv.res}
	tmp.content(files, m)
	for _, p := range files.Parts {
		if p.Type == loom.PartText {
			if out.Len() > 0 {
				out.WriteString("\n")
			}
			out.WriteString(p.Text)
		} else {
			importer.AddPart(msg, p)
		}
	}
	output, _ := json.Marshal(out.String())
	t := cv.now
	if !ok {
		i = importer.AddPart(msg, loom.Part{Type: loom.PartTool, CallID: msg.ID + "/" + strconv.Itoa(len(msg.Parts)), Name: name, Input: json.RawMessage("{}"), StartedAt: &t})
	} else {
		delete(cv.open, name)
	}
	p := &msg.Parts[i]
	p.Output, p.EndedAt, p.Status = output, &t, loom.ToolCompleted
	if m.Content.ContentType == "system_error" {
		p.Status, p.Error = loom.ToolError, strings.TrimSpace(m.Content.Name+": "+m.Content.Text)
	}
}

// fileURL names a file ChatGPT's export holds beside conversations.json
// by its id.
func fileURL(id string) string {
	if id == "" {
		return ""
	}
	return "file-service://" + id
}

// oneLine is an id trimmed, "" when it spans lines.
func oneLine(id string) string {
	id = strings.TrimSpace(id)
	if strings.ContainsAny(id, "\n\r") {
		return ""
	}
	return id
}
