package forge

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// The context of a conversation as Forge stores it (its ContextRecord):
// only the fields the reader uses are declared.

type contextRecord struct {
	Messages []json.RawMessage `json:"messages"`
}

// entry is a message of the context: its value and the usage of the
// model call that made it. Forge before it kept the value alone.
type entry struct {
	Message json.RawMessage `json:"message"`
	Usage   *usage          `json:"usage"`
}

type value struct {
	Text     *textMessage `json:"text"`
	Tool     *toolResult  `json:"tool"`
	Image    *struct{}    `json:"image"`
	Document *struct{}    `json:"document"`
}

type textMessage struct {
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	RawContent json.RawMessage `json:"raw_content"`
	ToolCalls  []struct {
		Name      string          `json:"name"`
		CallID    string          `json:"call_id"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool_calls"`
	Model     string `json:"model"`
	Reasoning []struct {
		Text string `json:"text"`
	} `json:"reasoning_details"`
	Droppable bool `json:"droppable"`
}

type toolResult struct {
	Name   string `json:"name"`
	CallID string `json:"call_id"`
	Output struct {
		IsError bool              `json:"is_error"`
		Values  []json.RawMessage `json:"values"`
	} `json:"output"`
}

// usage is a model call's tokens; each count is the provider's
// ("actual") or Forge's estimate ("approx").
type usage struct {
	Prompt     count    `json:"prompt_tokens"`
	Completion count    `json:"completion_tokens"`
	Cached     count    `json:"cached_tokens"`
	Cost       *float64 `json:"cost"`
}

type count struct {
	Actual *float64 `json:"actual"`
	Approx *float64 `json:"approx"`
}

func (c *count) UnmarshalJSON(b []byte) error {
	var m map[string]float64
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	for k, v := range m {
		switch strings.ToLower(k) {
		case "actual":
			c.Actual = &v
		case "approx":
			c.Approx = &v
		}
	}
	return nil
}

// estimated reports whether u holds Forge's estimates, not the
// provider's counts.
func (u *usage) estimated() bool {
	return u.Prompt.Actual == nil && u.Completion.Actual == nil
}

func (c count) n() int64 {
	if c.Actual == nil {
		return 0
	}
	return importer.Tokens(*c.Actual)
}

// read reads one conversation's context (data) into a session; nil when
// it holds no message. The sub-agents its tool results name are noted
// in parents.
func read(res *importer.Result, path, id string, data []byte, at time.Time, parents map[string]string) *importer.Session {
	var c contextRecord
	if err := json.Unmarshal(data, &c); err != nil {
		res.Problemf(path, 0, "conversation "+id+": its context is not Forge's: "+importer.Excerpt(err.Error()))
		return nil
	}
	if !utf8.Valid(data) {
		res.Problemf(path, 0, "conversation "+id+": "+importer.NotUTF8)
	}
	t := &importer.Transcript{Res: res}
	var model string
	var added map[string]bool
	for i, raw := range c.Messages {
		mid := "m" + strconv.Itoa(i)
		var e entry
		if json.Unmarshal(raw, &e) != nil || len(e.Message) == 0 {
			// Forge before the entries kept the value alone.
			e = entry{Message: raw}
		}
		var v value
		if err := json.Unmarshal(e.Message, &v); err != nil {
			res.Problemf(path, 0, "conversation "+id+", message "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
			continue
		}
		switch {
		case v.Text != nil:
			if m := text(res, mid, v.Text, e.Usage, at); m != nil {
				if strings.EqualFold(v.Text.Role, "system") {
					// Readers before kept no system prompt
					// (importer.Session.Added).
					if added == nil {
						added = map[string]bool{}
					}
					added[mid] = true
				}
				t.Add(m)
				if m.Model != "" {
					model = m.Model
				}
			}
		case v.Tool != nil:
			toolResultOf(res, t, v.Tool, at, id, parents)
		case v.Image != nil || v.Document != nil:
			res.Skip("attachment")
		default:
			res.Skip("message:unknown")
		}
	}
	s := t.Session(id, path)
	if s != nil {
		s.Model, s.Added = model, added
	}
	return s
}

// text is a text message as a loom message; a system message (Forge's
// prompt) is a system message: what Forge told the model, kept, not the
// conversation.
func text(res *importer.Result, mid string, tm *textMessage, u *usage, at time.Time) *loom.Message {
	m := &loom.Message{ID: mid, CreatedAt: at}
	switch strings.ToLower(tm.Role) {
	case "user":
		m.Role = loom.RoleUser
		if tm.Droppable {
			// Context Forge added of its own accord.
			m.Role = loom.RoleSystem
		}
		if s := typed(tm.RawContent); s != "" {
			tm.Content = s
		}
	case "assistant":
		m.Role, m.Model = loom.RoleAssistant, importer.Clip(tm.Model, 256)
	case "system":
		m.Role = loom.RoleSystem
	default:
		res.Skip("role:" + importer.TypeName(tm.Role))
		return nil
	}
	for _, r := range tm.Reasoning {
		if strings.TrimSpace(r.Text) != "" {
			m.Parts = append(m.Parts, loom.Part{ID: mid + "/" + strconv.Itoa(len(m.Parts)), Type: loom.PartReasoning, Text: r.Text})
		}
	}
	if strings.TrimSpace(tm.Content) != "" {
		m.Parts = append(m.Parts, loom.Part{ID: mid + "/" + strconv.Itoa(len(m.Parts)), Type: loom.PartText, Text: tm.Content})
	}
	for _, tc := range tm.ToolCalls {
		p := importer.ToolCall(mid+"/"+strconv.Itoa(len(m.Parts)), tc.CallID, tc.Name, tc.Arguments)
		start := at
		p.StartedAt = &start
		m.Parts = append(m.Parts, p)
	}
	if u != nil && m.Role == loom.RoleAssistant {
		if u.estimated() {
			res.Skip("usage:estimated")
		} else {
			cached := u.Cached.n()
			m.Usage = loom.Usage{InputTokens: max(0, u.Prompt.n()-cached), CacheReadTokens: cached, OutputTokens: u.Completion.n()}
			if u.Cost != nil {
				m.Usage.CostUSD = importer.Dollars(*u.Cost)
			}
		}
	}
	return m
}

// typed is the prompt as the user typed it, from a user message's
// raw_content (Forge's event value: the text, or an object holding it),
// "" when there is none.
func typed(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	for _, k := range []string{"text", "Text"} {
		if v, ok := obj[k]; ok {
			return typed(v)
		}
	}
	return ""
}

// toolResultOf completes the call a tool result answers: its text
// values, or its error; a value of a sub-agent's answer names that
// agent's conversation, a sub-agent of conv linked after the call.
func toolResultOf(res *importer.Result, t *importer.Transcript, tr *toolResult, at time.Time, conv string, parents map[string]string) {
	var texts []string
	var sub string
	for _, raw := range tr.Output.Values {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			// A unit value: "empty".
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			res.Skip("tool-value:unknown")
			continue
		}
		for k, v := range obj {
			switch strings.ToLower(k) {
			case "text", "markdown":
				var x string
				if json.Unmarshal(v, &x) == nil {
					texts = append(texts, x)
				}
			case "ai":
				var ai struct {
					Value          string `json:"value"`
					ConversationID string `json:"conversation_id"`
				}
				if json.Unmarshal(v, &ai) == nil {
					texts = append(texts, ai.Value)
					if c := importer.LineID(ai.ConversationID); c != "" && c != conv {
						sub = c
					}
				}
			default:
				res.Skip("tool-value:" + importer.TypeName(k))
			}
		}
	}
	callID := importer.LineID(tr.CallID)
	if !t.Complete(callID, strings.Join(texts, "\n"), tr.Output.IsError, at) || sub == "" {
		return
	}
	parents[sub] = conv
	for i := len(t.Msgs) - 1; i >= 0; i-- {
		for _, p := range t.Msgs[i].Parts {
			if p.Type == loom.PartTool && p.CallID == callID {
				importer.AddAgentPart(t.Msgs[i], p, sub)
				return
			}
		}
	}
}
