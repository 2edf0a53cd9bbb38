package zed

import (
	"cmp"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// A thread's data is JSON. Since version 0.3.0 (Zed's agent panel) its
// messages are {"User": {id, content}}, {"Agent": {content,
// tool_results}} or "Resume", their content items tagged by Rust's enum
// names (Text, Mention, Image; Text, Thinking, RedactedThinking,
// ToolUse). Before (the first agent panel, versions 0.1.0 and 0.2.0)
// they are {id, role, segments, tool_uses, tool_results, context}.

// threadData is the union of both versions' fields the reader uses.
type threadData struct {
	Version  string            `json:"version"`
	Title    string            `json:"title"`
	Summary  string            `json:"summary"`
	Messages []json.RawMessage `json:"messages"`
	Model    *struct {
		Provider string `json:"provider"`
		Model    string `json:"model"`
	} `json:"model"`
	Usage           tokenUsage `json:"cumulative_token_usage"`
	SubagentContext *struct {
		ParentThreadID string `json:"parent_thread_id"`
		ToolUseID      string `json:"tool_use_id"`
	} `json:"subagent_context"`
	Snapshot *struct {
		Worktrees []struct {
			Path string `json:"worktree_path"`
		} `json:"worktree_snapshots"`
	} `json:"initial_project_snapshot"`
}

type tokenUsage struct {
	Input      int64 `json:"input_tokens"`
	Output     int64 `json:"output_tokens"`
	CacheWrite int64 `json:"cache_creation_input_tokens"`
	CacheRead  int64 `json:"cache_read_input_tokens"`
}

// thread is one row of the threads table, as read.
type thread struct {
	ID, Title, Path, Parent, Cwd string
	Created, Updated             time.Time
	ToolUseID                    string
	Model, Provider              string
	b                            *builder
}

// decode reads a thread's JSON into its messages.
func (t *thread) decode(data []byte, res *importer.Result) error {
	var d threadData
	if err := json.Unmarshal(data, &d); err != nil {
		return errors.New("not JSON: " + importer.Excerpt(err.Error()))
	}
	t.Title = cmp.Or(strings.TrimSpace(t.Title), d.Title, d.Summary)
	if d.Model != nil {
		t.Model, t.Provider = d.Model.Model, d.Model.Provider
	}
	if c := d.SubagentContext; c != nil {
		t.Parent, t.ToolUseID = cmp.Or(t.Parent, c.ParentThreadID), c.ToolUseID
	}
	if t.Cwd == "" && d.Snapshot != nil && len(d.Snapshot.Worktrees) > 0 {
		t.Cwd = d.Snapshot.Worktrees[0].Path
	}
	at := cmp.Or(t.Updated, t.Created)
	t.b = &builder{res: res, path: t.Path, thread: t.ID, at: at, model: t.Model, provider: t.Provider, calls: map[string]callRef{}}
	legacy := d.Version != "0.3.0" && !strings.HasPrefix(d.Version, "1.")
	for i, raw := range d.Messages {
		if legacy {
			t.b.legacy(i, raw)
		} else {
			t.b.message(i, raw)
		}
	}
	t.b.usage(d.Usage)
	return nil
}

func (t *thread) session() *importer.Session {
	s := &importer.Session{
		SourceID: t.ID, Kind: loom.KindMain, Title: t.Title, Cwd: t.Cwd, Path: t.Path,
		Model: t.Model, Provider: t.Provider,
		CreatedAt: cmp.Or(t.Created, t.Updated), UpdatedAt: t.Updated,
		Messages: t.b.msgs,
	}
	return s
}

// builder builds a thread's messages. Zed records no message times: each
// has the thread's last update.
type builder struct {
	res             *importer.Result
	path, thread    string
	at              time.Time
	model, provider string
	msgs            []*loom.Message
	calls           map[string]callRef
	// user is the id of the last user message, n the agent messages
	// since: an agent message is named <user id>:<n>.
	user string
	n    int
}

type callRef struct{ msg, part int }

func (b *builder) newMessage(id, role string) *loom.Message {
	at := b.at
	m := &loom.Message{ID: id, Role: role, CreatedAt: at, CompletedAt: &at}
	if role == loom.RoleAssistant {
		m.Model, m.Provider = b.model, b.provider
	}
	return m
}

func (b *builder) problem(i int, reason string) {
	b.res.Problemf(b.path, 0, "thread "+importer.Clip(b.thread, 80)+": message "+strconv.Itoa(i)+": "+reason)
}

func (b *builder) add(m *loom.Message) {
	if len(m.Parts) > 0 {
		b.msgs = append(b.msgs, m)
	}
}

// message maps a message of version 0.3.0.
func (b *builder) message(i int, raw json.RawMessage) {
	var tagged map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tagged); err != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			b.res.Skip(strings.ToLower(importer.TypeName(s)))
			return
		}
		b.problem(i, "not a message")
		return
	}
	switch {
	case tagged["User"] != nil:
		var u struct {
			ID      string            `json:"id"`
			Content []json.RawMessage `json:"content"`
		}
		if json.Unmarshal(tagged["User"], &u) != nil {
			b.problem(i, "a user message Zed did not write")
			return
		}
		b.user, b.n = cmp.Or(u.ID, b.thread+":"+strconv.Itoa(i)), 0
		if strings.ContainsAny(b.user, "\r\n/") {
			b.user = b.thread + ":" + strconv.Itoa(i)
		}
		m := b.newMessage(b.user, loom.RoleUser)
		for _, c := range u.Content {
			b.userContent(m, c)
		}
		b.add(m)
	case tagged["Agent"] != nil:
		var a struct {
			Content     []json.RawMessage          `json:"content"`
			ToolResults map[string]json.RawMessage `json:"tool_results"`
		}
		if json.Unmarshal(tagged["Agent"], &a) != nil {
			b.problem(i, "an agent message Zed did not write")
			return
		}
		b.n++
		m := b.newMessage(cmp.Or(b.user, b.thread)+":"+strconv.Itoa(b.n), loom.RoleAssistant)
		for _, c := range a.Content {
			b.agentContent(m, c)
		}
		b.add(m)
		for _, r := range a.ToolResults {
			b.result(r)
		}
	default:
		for k := range tagged {
			b.res.Skip("unknown:" + importer.TypeName(k))
		}
	}
}

// one is a content item: its tag and value.
func one(raw json.RawMessage) (string, json.RawMessage) {
	var tagged map[string]json.RawMessage
	if json.Unmarshal(raw, &tagged) != nil || len(tagged) != 1 {
		return "", nil
	}
	for k, v := range tagged {
		return k, v
	}
	return "", nil
}

// text adds a Text item's text.
func (b *builder) text(m *loom.Message, v json.RawMessage) {
	var s string
	if json.Unmarshal(v, &s) == nil && strings.TrimSpace(s) != "" {
		m.Parts = append(m.Parts, loom.Part{ID: b.partID(m), Type: loom.PartText, Text: s})
	}
}

func (b *builder) partID(m *loom.Message) string { return m.ID + "/" + strconv.Itoa(len(m.Parts)) }

func (b *builder) userContent(m *loom.Message, raw json.RawMessage) {
	tag, v := one(raw)
	switch tag {
	case "Text":
		b.text(m, v)
	case "Mention":
		var mn struct {
			URI     json.RawMessage `json:"uri"`
			Content string          `json:"content"`
		}
		if json.Unmarshal(v, &mn) != nil {
			b.res.Skip("bad-mention")
			return
		}
		p := loom.Part{ID: b.partID(m), Type: loom.PartFile, Mime: "text/plain"}
		var uri string
		if json.Unmarshal(mn.URI, &uri) == nil {
			p.URL = uri
		} else if c := importer.CompactJSON(mn.URI); c != nil {
			p.Metadata = importer.Meta("uri", string(c))
		}
		if mn.Content != "" {
			p.Source = &loom.FileSource{Type: "file", Path: uri, Text: mn.Content}
		}
		m.Parts = append(m.Parts, p)
	case "Image":
		m.Parts = append(m.Parts, imagePart(b.partID(m), v))
	case "":
		b.res.Skip("untagged-content")
	default:
		b.res.Skip("unknown:" + importer.TypeName(tag))
	}
}

func imagePart(id string, v json.RawMessage) loom.Part {
	var img struct {
		Source string `json:"source"`
	}
	p := loom.Part{ID: id, Type: loom.PartFile, Mime: "image/png"}
	if json.Unmarshal(v, &img) == nil && img.Source != "" {
		p.URL = "data:image/png;base64," + img.Source
	}
	return p
}

func (b *builder) agentContent(m *loom.Message, raw json.RawMessage) {
	tag, v := one(raw)
	switch tag {
	case "Text":
		b.text(m, v)
	case "Thinking":
		var th struct {
			Text      string `json:"text"`
			Signature string `json:"signature"`
		}
		if json.Unmarshal(v, &th) == nil && th.Text != "" {
			b.thinking(m, th.Text, th.Signature)
		}
	case "RedactedThinking":
		var s string
		_ = json.Unmarshal(v, &s)
		m.Parts = append(m.Parts, loom.Part{ID: b.partID(m), Type: loom.PartReasoning, Metadata: importer.Meta("redacted_data", s)})
	case "ToolUse":
		var tu struct {
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			RawInput string          `json:"raw_input"`
			Input    json.RawMessage `json:"input"`
		}
		if json.Unmarshal(v, &tu) != nil {
			b.res.Skip("bad-tool-use")
			return
		}
		input := importer.CompactJSON(tu.Input)
		if input == nil || input[0] != '{' {
			input = importer.CompactJSON(json.RawMessage(tu.RawInput))
		}
		b.call(m, tu.ID, tu.Name, input)
	case "":
		b.res.Skip("untagged-content")
	default:
		b.res.Skip("unknown:" + importer.TypeName(tag))
	}
}

func (b *builder) thinking(m *loom.Message, text, signature string) {
	p := loom.Part{ID: b.partID(m), Type: loom.PartReasoning, Text: text}
	if signature != "" {
		p.Metadata = importer.Meta("signature", signature)
	}
	m.Parts = append(m.Parts, p)
}

// call adds a tool call to an agent message, running until its result.
func (b *builder) call(m *loom.Message, id, name string, input json.RawMessage) {
	p := loom.Part{ID: b.partID(m), Type: loom.PartTool, CallID: cmp.Or(id, b.partID(m)), Name: cmp.Or(name, "unknown"), Status: loom.ToolRunning, Input: json.RawMessage(`{}`)}
	if input != nil && input[0] == '{' {
		p.Input = input
	}
	if _, dup := b.calls[p.CallID]; dup {
		b.res.Skip("duplicate-tool-use")
		return
	}
	b.calls[p.CallID] = callRef{msg: len(b.msgs), part: len(m.Parts)}
	m.Parts = append(m.Parts, p)
}

// result completes the call a tool result names.
func (b *builder) result(raw json.RawMessage) {
	var r struct {
		ToolUseID string          `json:"tool_use_id"`
		IsError   bool            `json:"is_error"`
		Content   json.RawMessage `json:"content"`
		Output    json.RawMessage `json:"output"`
	}
	if json.Unmarshal(raw, &r) != nil {
		b.res.Skip("bad-tool-result")
		return
	}
	ref, ok := b.calls[r.ToolUseID]
	if !ok || ref.msg >= len(b.msgs) {
		b.res.Skip("orphan-tool-result")
		return
	}
	p := &b.msgs[ref.msg].Parts[ref.part]
	out := resultText(r.Content)
	o, _ := json.Marshal(out)
	p.Output, p.Status = o, loom.ToolCompleted
	if r.IsError {
		p.Status, p.Error = loom.ToolError, cmp.Or(out, "error")
	}
	if c := importer.CompactJSON(r.Output); c != nil && c[0] == '{' {
		p.Metadata = c
	}
}

// resultText is a tool result's content: text ("…", {"Text": "…"}, or a
// list of those), an image as [image].
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		var parts []string
		for _, r := range list {
			parts = append(parts, resultText(r))
		}
		return strings.Join(parts, "\n")
	}
	switch tag, v := one(raw); tag {
	case "Text", "text":
		return resultText(v)
	case "Image", "image":
		return "[image]"
	}
	return string(importer.CompactJSON(raw))
}

// legacy maps a message of the first agent panel (0.1.0, 0.2.0).
func (b *builder) legacy(i int, raw json.RawMessage) {
	var lm struct {
		ID       json.Number `json:"id"`
		Role     string      `json:"role"`
		Segments []struct {
			Type      string `json:"type"`
			Text      string `json:"text"`
			Signature string `json:"signature"`
			Data      string `json:"data"`
		} `json:"segments"`
		ToolUses []struct {
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"tool_uses"`
		ToolResults []json.RawMessage `json:"tool_results"`
		Context     string            `json:"context"`
		IsHidden    bool              `json:"is_hidden"`
	}
	if err := json.Unmarshal(raw, &lm); err != nil {
		b.problem(i, "not a message: "+importer.Excerpt(err.Error()))
		return
	}
	id := b.thread + ":" + cmp.Or(lm.ID.String(), strconv.Itoa(i))
	var m *loom.Message
	switch lm.Role {
	case "user":
		m = b.newMessage(id, loom.RoleUser)
	case "assistant":
		m = b.newMessage(id, loom.RoleAssistant)
	case "system":
		m = b.newMessage(id, loom.RoleSystem)
	default:
		b.res.Skip("unknown:" + importer.TypeName(lm.Role))
		return
	}
	if lm.IsHidden {
		b.res.Skip("hidden-message")
		for _, r := range lm.ToolResults {
			b.result(r)
		}
		return
	}
	for _, sg := range lm.Segments {
		switch sg.Type {
		case "text":
			if strings.TrimSpace(sg.Text) != "" {
				m.Parts = append(m.Parts, loom.Part{ID: b.partID(m), Type: loom.PartText, Text: sg.Text})
			}
		case "thinking":
			if sg.Text != "" {
				b.thinking(m, sg.Text, sg.Signature)
			}
		case "redacted_thinking":
			m.Parts = append(m.Parts, loom.Part{ID: b.partID(m), Type: loom.PartReasoning, Metadata: importer.Meta("redacted_data", sg.Data)})
		default:
			b.res.Skip("unknown:" + importer.TypeName(sg.Type))
		}
	}
	if len(m.Parts) == 0 && strings.TrimSpace(lm.Context) != "" && m.Role == loom.RoleUser {
		m.Parts = append(m.Parts, loom.Part{ID: b.partID(m), Type: loom.PartText, Text: lm.Context})
	}
	for _, tu := range lm.ToolUses {
		if m.Role != loom.RoleAssistant {
			b.res.Skip("tool-use-in-" + m.Role)
			continue
		}
		b.call(m, tu.ID, tu.Name, importer.CompactJSON(tu.Input))
	}
	b.add(m)
	for _, r := range lm.ToolResults {
		b.result(r)
	}
}

// usage puts the thread's token counts, which Zed keeps for the whole
// thread, on its last agent message.
func (b *builder) usage(u tokenUsage) {
	for i := len(b.msgs) - 1; i >= 0; i-- {
		if b.msgs[i].Role == loom.RoleAssistant {
			b.msgs[i].Usage = loom.Usage{InputTokens: max(u.Input, 0), OutputTokens: max(u.Output, 0), CacheWriteTokens: max(u.CacheWrite, 0), CacheReadTokens: max(u.CacheRead, 0)}
			return
		}
	}
}

// linkAgent names the sub-agent's thread sub in the message of the call
// that ran it.
func (b *builder) linkAgent(call, sub string) {
	if ref, ok := b.calls[call]; ok && ref.msg < len(b.msgs) {
		m := b.msgs[ref.msg]
		importer.AddAgentPart(m, m.Parts[ref.part], sub)
	}
}
