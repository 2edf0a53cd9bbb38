package clinetasks

import (
	"bytes"
	"cmp"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// task is one task directory's files as read.
type task struct {
	id       string
	dir      string
	files    []taskFile
	modified time.Time
}

type taskFile struct {
	name, path string
	data       []byte
}

// apiMessage is one message of api_conversation_history.json: Anthropic's
// message form, with the time Roo Code and Kilo Code add and Roo's mark
// of a compaction's summary.
type apiMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	TS        float64         `json:"ts"`
	IsSummary bool            `json:"isSummary"`
}

// block is one content block of a message.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

// uiMessage is one message of ui_messages.json, what the extension
// showed; only the API requests' usage and times are read from it.
type uiMessage struct {
	TS   float64 `json:"ts"`
	Type string  `json:"type"`
	Say  string  `json:"say"`
	Text string  `json:"text"`
}

// apiRequest is the text of an api_req_started message once the request
// ended: its tokens and cost.
type apiRequest struct {
	TokensIn    *float64 `json:"tokensIn"`
	TokensOut   *float64 `json:"tokensOut"`
	CacheWrites float64  `json:"cacheWrites"`
	CacheReads  float64  `json:"cacheReads"`
	Cost        float64  `json:"cost"`
	APIProtocol string   `json:"apiProtocol"`
}

// metadata is task_metadata.json: the models the task used.
type metadata struct {
	ModelUsage []struct {
		ModelID         string `json:"model_id"`
		ModelProviderID string `json:"model_provider_id"`
	} `json:"model_usage"`
}

// historyItem is history_item.json (Roo Code and Kilo Code): the
// task's entry in the extension's history.
type historyItem struct {
	ID           string   `json:"id"`
	TS           float64  `json:"ts"`
	Task         string   `json:"task"`
	Workspace    string   `json:"workspace"`
	ParentTaskID string   `json:"parentTaskId"`
	ChildIDs     []string `json:"childIds"`
}

// request is one API request's usage and time.
type request struct {
	at    time.Time
	usage loom.Usage
}

func (t *task) parse() *importer.Result {
	res := &importer.Result{}
	var (
		api      []apiMessage
		apiPath  string
		haveAPI  bool
		requests []request
		lastUI   time.Time
		firstUI  time.Time
		meta     metadata
		item     historyItem
	)
	for _, f := range t.files {
		switch f.name {
		case apiFile:
			apiPath, haveAPI = f.path, true
			api = decodeList[apiMessage](res, f.path, f.data)
		case uiFile:
			for _, m := range decodeList[uiMessage](res, f.path, f.data) {
				at := importer.Millis(m.TS)
				if firstUI.IsZero() {
					firstUI = at
				}
				if at.After(lastUI) {
					lastUI = at
				}
				if m.Say != "api_req_started" {
					continue
				}
				var r apiRequest
				if json.Unmarshal([]byte(m.Text), &r) != nil || (r.TokensIn == nil && r.TokensOut == nil) {
					continue // a request that never finished
				}
				requests = append(requests, request{at: at, usage: r.loom()})
			}
		case metadataFile:
			if json.Unmarshal(f.data, &meta) != nil {
				res.Problemf(f.path, 0, "not task metadata")
			}
		case historyFile:
			if json.Unmarshal(f.data, &item) != nil {
				res.Problemf(f.path, 0, "not a history item")
			}
		}
	}
	if !haveAPI {
		res.Skip("task-without-conversation")
		return res
	}
	id := cmp.Or(strings.TrimSpace(item.ID), t.id)
	if strings.ContainsAny(id, "\n\r") || id == "" || id == "." {
		id = t.id
	}
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: apiPath, Title: strings.TrimSpace(item.Task), Cwd: item.Workspace}
	if p := strings.TrimSpace(item.ParentTaskID); p != "" && p != id && !strings.ContainsAny(p, "\n\r") {
		s.Kind, s.ParentSourceID = loom.KindSubagent, p
	}
	if n := len(meta.ModelUsage); n > 0 {
		s.Model, s.Provider = meta.ModelUsage[n-1].ModelID, meta.ModelUsage[n-1].ModelProviderID
	}
	s.CreatedAt = importer.Millis(item.TS)
	if s.CreatedAt.IsZero() {
		// Cline names a task by the time it started, in milliseconds.
		if n, err := strconv.ParseInt(t.id, 10, 64); err == nil {
			s.CreatedAt = importer.Millis(float64(n))
		}
	}
	s.CreatedAt = cmp.Or(s.CreatedAt, firstUI, t.modified)
	s.UpdatedAt = cmp.Or(lastUI, t.modified)

	b := &builder{res: res, file: apiPath, calls: map[string]*loom.Part{}, model: s.Model, provider: s.Provider, children: item.ChildIDs}
	at := s.CreatedAt
	asked := 0 // assistant messages so far
	for i := range api {
		m := &api[i]
		mid := strconv.Itoa(i)
		when := importer.Millis(m.TS)
		if when.IsZero() && asked < len(requests) {
			// The request that sent it, or that it answers.
			when = requests[asked].at
		}
		at = cmp.Or(when, at)
		switch m.Role {
		case "user":
			b.user(mid, m, at)
			if s.Cwd == "" {
				s.Cwd = b.cwd
			}
		case "assistant":
			msg := b.assistant(mid, m, at)
			if m.IsSummary {
				break // written by the extension, not one of the task's requests
			}
			if msg != nil && asked < len(requests) {
				msg.Usage = requests[asked].usage
			}
			asked++
		default:
			res.Skip("unknown:" + importer.TypeName(m.Role))
		}
	}
	// Requests beyond the replies (retries, a reply left out) count on
	// the last reply, so that the task's usage is whole.
	if asked < len(requests) {
		if last := b.lastAssistant(); last != nil {
			for _, r := range requests[asked:] {
				last.Usage.Add(r.usage)
			}
		}
	}
	if len(b.msgs) == 0 {
		res.Skip("empty-session")
		return res
	}
	for _, m := range b.msgs {
		if m.CreatedAt.After(s.UpdatedAt) {
			s.UpdatedAt = m.CreatedAt
		}
	}
	if s.UpdatedAt.Before(s.CreatedAt) {
		s.UpdatedAt = s.CreatedAt
	}
	s.Messages = b.msgs
	res.Sessions = []*importer.Session{s}
	return res
}

// decodeList decodes a JSON array, element by element: an element that
// is not a T is a problem and the rest is read; a file that is no array
// is a problem of its own.
func decodeList[T any](res *importer.Result, path string, data []byte) []T {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		res.Problemf(path, 0, "not a JSON array: "+importer.Excerpt(err.Error()))
		return nil
	}
	out := make([]T, 0, len(raw))
	for i, r := range raw {
		var v T
		if err := json.Unmarshal(r, &v); err != nil {
			res.Problemf(path, 0, "element "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
			continue
		}
		out = append(out, v)
	}
	return out
}

// builder maps the conversation's messages to loom messages in order.
type builder struct {
	res             *importer.Result
	file            string
	model, provider string
	msgs            []*loom.Message
	calls           map[string]*loom.Part
	// children are the sub-tasks a Roo Code task started, in order, for
	// its new_task calls.
	children []string
	cwd      string
}

// cwdLine is where the environment details name the working directory:
// "# Current Working Directory (…) Files" (Cline), "# Current Workspace
// Directory (…) Files" (Roo Code).
var cwdLine = regexp.MustCompile(`(?m)^# Current (?:Working|Workspace) Directory \((.+?)\) Files`)

func (b *builder) user(mid string, m *apiMessage, at time.Time) {
	msg := &loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at}
	for j, bl := range blocks(m.Content) {
		pid := mid + "/" + strconv.Itoa(j)
		switch bl.Type {
		case "text":
			text := strings.TrimSpace(bl.Text)
			if strings.HasPrefix(text, "<environment_details>") {
				// What the extension adds to every request about the
				// editor's state, not what the user wrote.
				if b.cwd == "" {
					if c := cwdLine.FindStringSubmatch(text); c != nil {
						b.cwd = strings.TrimSpace(c[1])
					}
				}
				b.res.Skip("environment-details")
				continue
			}
			if text = unwrap(text); text != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: text})
			}
		case "image":
			if p, ok := image(pid, bl); ok {
				msg.Parts = append(msg.Parts, p)
			}
		case "tool_result":
			b.result(bl)
		default:
			b.res.Skip("unknown-block:" + importer.TypeName(bl.Type))
		}
	}
	b.add(msg)
}

func (b *builder) assistant(mid string, m *apiMessage, at time.Time) *loom.Message {
	role := loom.RoleAssistant
	if m.IsSummary {
		role = loom.RoleSummary
	}
	msg := &loom.Message{ID: mid, Role: role, Model: b.model, Provider: b.provider, CreatedAt: at}
	if m.IsSummary {
		msg.Usage.Compactions = 1
	}
	for j, bl := range blocks(m.Content) {
		pid := mid + "/" + strconv.Itoa(j)
		switch bl.Type {
		case "text":
			if strings.TrimSpace(bl.Text) != "" {
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: bl.Text})
			}
		case "thinking", "reasoning":
			p := loom.Part{ID: pid, Type: loom.PartReasoning, Text: cmp.Or(bl.Thinking, bl.Text)}
			if bl.Signature != "" {
				p.Metadata = importer.Meta("signature", bl.Signature)
			}
			if p.Text != "" || p.Metadata != nil {
				msg.Parts = append(msg.Parts, p)
			}
		case "redacted_thinking":
			msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartReasoning, Metadata: importer.Meta("redacted_data", bl.Data)})
		case "tool_use":
			name := cmp.Or(strings.TrimSpace(bl.Name), "unknown")
			in := importer.CompactJSON(bl.Input)
			if in == nil || in[0] != '{' {
				in = json.RawMessage(`{}`)
			}
			msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartTool, CallID: cmp.Or(bl.ID, pid), Name: name, Status: loom.ToolRunning, Input: in})
			if (name == "new_task" || name == "newTask") && len(b.children) > 0 {
				// Roo Code's sub-task, which its history item lists in
				// the order the calls started them.
				msg.Parts = append(msg.Parts, loom.Part{ID: pid + "/agent", Type: loom.PartAgent, Name: name, SessionID: b.children[0]})
				b.children = b.children[1:]
			}
		default:
			b.res.Skip("unknown-block:" + importer.TypeName(bl.Type))
		}
	}
	if len(msg.Parts) == 0 {
		b.res.Skip("empty-" + role + "-message")
		return nil
	}
	b.add(msg)
	return msg
}

// result completes the call a tool_result answers.
func (b *builder) result(bl block) {
	p := b.calls[bl.ToolUseID]
	if p == nil {
		b.res.Skip("orphan-tool-result")
		return
	}
	text := plain(bl.Content)
	if bl.IsError {
		p.Status, p.Error = loom.ToolError, cmp.Or(text, "error")
		return
	}
	out, _ := json.Marshal(text)
	p.Status, p.Output = loom.ToolCompleted, out
}

func (b *builder) add(msg *loom.Message) {
	if len(msg.Parts) == 0 {
		b.res.Skip("empty-" + msg.Role + "-message")
		return
	}
	done := msg.CreatedAt
	msg.CompletedAt = &done
	b.msgs = append(b.msgs, msg)
	for i := range msg.Parts {
		if p := &msg.Parts[i]; p.Type == loom.PartTool {
			b.calls[p.CallID] = p
		}
	}
}

func (b *builder) lastAssistant() *loom.Message {
	for i := len(b.msgs) - 1; i >= 0; i-- {
		if b.msgs[i].Role == loom.RoleAssistant {
			return b.msgs[i]
		}
	}
	return nil
}

// blocks is a message's content as blocks: a string is one text block.
func blocks(raw json.RawMessage) []block {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []block{{Type: "text", Text: s}}
		}
		return nil
	}
	var raws []json.RawMessage
	if json.Unmarshal(raw, &raws) != nil {
		return nil
	}
	out := make([]block, 0, len(raws))
	for _, r := range raws {
		var bl block
		if json.Unmarshal(r, &bl) != nil {
			bl = block{Type: "not-an-object"}
		}
		out = append(out, bl)
	}
	return out
}

// plain is a tool result's content as text: the string, or its text
// blocks joined.
func plain(raw json.RawMessage) string {
	var parts []string
	for _, bl := range blocks(raw) {
		if bl.Type == "text" && bl.Text != "" {
			parts = append(parts, bl.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// unwrap takes off the tag the extensions put around what the user
// typed (<task>, <feedback>, <user_message>, <answer>).
func unwrap(text string) string {
	for _, tag := range []string{"task", "feedback", "user_message", "answer"} {
		open, end := "<"+tag+">", "</"+tag+">"
		if strings.HasPrefix(text, open) && strings.HasSuffix(text, end) {
			return strings.TrimSpace(text[len(open) : len(text)-len(end)])
		}
	}
	return text
}

func image(pid string, bl block) (loom.Part, bool) {
	src := bl.Source
	if src == nil {
		return loom.Part{}, false
	}
	switch {
	case src.Type == "base64" && src.Data != "":
		return loom.Part{ID: pid, Type: loom.PartFile, Mime: src.MediaType, URL: "data:" + src.MediaType + ";base64," + src.Data}, true
	case src.URL != "":
		return loom.Part{ID: pid, Type: loom.PartFile, Mime: src.MediaType, URL: src.URL}, true
	}
	return loom.Part{}, false
}

func (r apiRequest) loom() loom.Usage {
	u := loom.Usage{
		InputTokens:      importer.Tokens(deref(r.TokensIn)),
		OutputTokens:     importer.Tokens(deref(r.TokensOut)),
		CacheReadTokens:  importer.Tokens(r.CacheReads),
		CacheWriteTokens: importer.Tokens(r.CacheWrites),
		APICalls:         1,
	}
	if r.Cost > 0 && r.Cost < 1e9 {
		u.CostUSD = r.Cost
	}
	if r.APIProtocol == "openai" {
		// OpenAI's prompt tokens count the cached ones; loom's input
		// does not.
		u.InputTokens = max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	}
	return u
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}
