package continuedev

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
)

// The JSON below is Continue's Session, as its core writes
// <session id>.json: an id, a title, the workspace, the model's title,
// and the history, a list of items each holding one chat message and
// what goes with it. Only the fields the reader uses are declared.

type session struct {
	SessionID          string            `json:"sessionId"`
	Title              string            `json:"title"`
	WorkspaceDirectory string            `json:"workspaceDirectory"`
	ChatModelTitle     string            `json:"chatModelTitle"`
	History            []json.RawMessage `json:"history"`
	Usage              *usageJSON        `json:"usage"`
}

// historyItem is one ChatHistoryItem.
type historyItem struct {
	Message        chatMessage     `json:"message"`
	ContextItems   []contextItem   `json:"contextItems"`
	ToolCallStates []toolCallState `json:"toolCallStates"`
	// ToolCallState is the one tool call of an item in versions before
	// toolCallStates.
	ToolCallState       *toolCallState `json:"toolCallState"`
	Reasoning           *reasoning     `json:"reasoning"`
	ConversationSummary string         `json:"conversationSummary"`
	// LoomHandoff records the loom session a handed-off session
	// continues (handoff.OriginField), on its first item.
	LoomHandoff *handoff.Origin `json:"loomHandoff"`
}

type chatMessage struct {
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ToolCalls        []toolCall      `json:"toolCalls"`
	ToolCallID       string          `json:"toolCallId"`
	Usage            *usageJSON      `json:"usage"`
	Signature        string          `json:"signature"`
	RedactedThinking string          `json:"redactedThinking"`
}

// toolCall is a call of an assistant message, in the Chat Completions
// form.
type toolCall = importer.ChatToolCall

type toolCallState struct {
	ToolCallID string          `json:"toolCallId"`
	ToolCall   toolCall        `json:"toolCall"`
	Status     string          `json:"status"`
	ParsedArgs json.RawMessage `json:"parsedArgs"`
	Output     []contextItem   `json:"output"`
}

// contextItem is context attached to a prompt (a file, a selection,
// the output of a context provider) or a tool's output.
type contextItem struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Content     string `json:"content"`
}

type reasoning struct {
	Text    string  `json:"text"`
	StartAt float64 `json:"startAt"`
	EndAt   float64 `json:"endAt"`
}

// usageJSON is token counts: a reply's as the CLI records it (OpenAI's
// snake_case usage, with the model) or a session's (camelCase).
type usageJSON struct {
	PromptTokens            float64  `json:"promptTokens"`
	CompletionTokens        float64  `json:"completionTokens"`
	PromptTokensDetails     *details `json:"promptTokensDetails"`
	CompletionTokensDetails *details `json:"completionTokensDetails"`

	SnakePrompt            float64  `json:"prompt_tokens"`
	SnakeCompletion        float64  `json:"completion_tokens"`
	SnakePromptDetails     *details `json:"prompt_tokens_details"`
	SnakeCompletionDetails *details `json:"completion_tokens_details"`
	Model                  string   `json:"model"`
}

type details struct {
	CachedTokens     float64 `json:"cachedTokens"`
	CacheWriteTokens float64 `json:"cacheWriteTokens"`
	ReasoningTokens  float64 `json:"reasoningTokens"`

	SnakeCached    float64 `json:"cached_tokens"`
	SnakeReasoning float64 `json:"reasoning_tokens"`
}

// defaultTitles are the titles Continue gives a session before naming
// it: the extensions' and the CLI's.
var defaultTitles = map[string]bool{"New Session": true, "Untitled Session": true}

// parse reads one session file's data; created is its start time from
// sessions.json (zero when it is not listed), modified its file's time.
func parse(file string, data []byte, created, modified time.Time) (*importer.Result, error) {
	res := &importer.Result{}
	var s session
	if err := json.Unmarshal(data, &s); err != nil {
		// A file of another kind in the directory, or one cut short.
		res.Problemf(file, 0, "not a Continue session: "+importer.Excerpt(err.Error()))
		return res, nil
	}
	res.CheckUTF8(file, 0, data)
	id := strings.TrimSuffix(filepath.Base(file), ".json")
	if s.SessionID != "" && !strings.ContainsAny(s.SessionID, "\r\n") {
		id = s.SessionID
	}
	out := &importer.Session{
		SourceID:  id,
		Kind:      loom.KindMain,
		Cwd:       importer.FileURIPath(s.WorkspaceDirectory),
		Model:     s.ChatModelTitle,
		Path:      file,
		CreatedAt: created,
		UpdatedAt: modified.UTC(),
	}
	if t := strings.TrimSpace(s.Title); !defaultTitles[t] {
		out.Title = t
	}
	b := &builder{res: res, file: file, model: s.ChatModelTitle, calls: map[string]*loom.Part{}}
	for i, raw := range s.History {
		var it historyItem
		if err := json.Unmarshal(raw, &it); err != nil {
			res.Problemf(file, 0, "history item "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
			continue
		}
		mid := it.Message.ID
		if mid == "" || strings.ContainsAny(mid, "\r\n") {
			// Continue's items had no id before: one is named by its
			// place in the history, which Continue appends to.
			mid = id + ":" + strconv.Itoa(i)
		}
		if out.Origin == nil {
			out.Origin = it.LoomHandoff
		}
		b.item(mid, &it)
	}
	if len(b.msgs) == 0 {
		res.Skip("empty-session")
		return res, nil
	}
	if s.Usage != nil && !b.usage {
		// The CLI's total for the session, when no reply has its own.
		for i := len(b.msgs) - 1; i >= 0; i-- {
			if b.msgs[i].Role == loom.RoleAssistant {
				b.msgs[i].Usage = s.Usage.loom()
				break
			}
		}
	}
	out.Messages = b.msgs
	if out.CreatedAt.IsZero() || out.UpdatedAt.Before(out.CreatedAt) {
		out.CreatedAt = out.UpdatedAt
	}
	res.Sessions = []*importer.Session{out}
	return res, nil
}

// builder maps history items to loom messages in order.
type builder struct {
	res   *importer.Result
	file  string
	model string
	msgs  []*loom.Message
	// calls are the tool parts made so far, by call id, for the tool
	// messages that carry their results.
	calls map[string]*loom.Part
	// usage is whether a reply had usage of its own.
	usage bool
}

func (b *builder) item(mid string, it *historyItem) {
	m := &it.Message
	switch m.Role {
	case "user":
		msg := &loom.Message{ID: mid, Role: loom.RoleUser, Parts: content(mid, m.Content)}
		b.add(msg)
		var ctx []loom.Part
		for j, c := range it.ContextItems {
			text := strings.TrimSpace(c.Content)
			if text == "" {
				continue
			}
			if c.Name != "" {
				text = c.Name + "\n\n" + text
			}
			ctx = append(ctx, loom.Part{ID: mid + "/context/" + strconv.Itoa(j), Type: loom.PartText, Text: text})
		}
		if len(ctx) > 0 {
			// Context attached to the prompt is not what the user typed.
			b.add(&loom.Message{ID: mid + "/context", Role: loom.RoleSystem, Parts: ctx})
		}
	case "assistant":
		msg := &loom.Message{ID: mid, Role: loom.RoleAssistant, Model: b.model}
		if r := it.Reasoning; r != nil && strings.TrimSpace(r.Text) != "" {
			msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/reasoning", Type: loom.PartReasoning, Text: r.Text})
			msg.CreatedAt = importer.Millis(r.StartAt)
			if end := importer.Millis(r.EndAt); !end.IsZero() {
				msg.CompletedAt = &end
			}
		}
		msg.Parts = append(msg.Parts, content(mid, m.Content)...)
		msg.Parts = append(msg.Parts, b.tools(mid, it)...)
		if m.Usage != nil {
			msg.Usage, b.usage = m.Usage.loom(), true
			msg.Model = cmp.Or(m.Usage.Model, msg.Model)
		}
		b.add(msg)
	case "thinking":
		p := loom.Part{ID: mid + "/0", Type: loom.PartReasoning, Text: plain(m.Content)}
		switch {
		case m.RedactedThinking != "":
			p.Metadata = importer.Meta("redacted_data", m.RedactedThinking)
		case m.Signature != "":
			p.Metadata = importer.Meta("signature", m.Signature)
		}
		if p.Text == "" && p.Metadata == nil {
			b.res.Skip("empty-reasoning")
			break
		}
		b.add(&loom.Message{ID: mid, Role: loom.RoleAssistant, Model: b.model, Parts: []loom.Part{p}})
	case "system":
		b.add(&loom.Message{ID: mid, Role: loom.RoleSystem, Parts: content(mid, m.Content)})
	case "tool":
		p := b.calls[m.ToolCallID]
		if p == nil {
			b.res.Skip("orphan-tool-result")
			break
		}
		if p.Status == loom.ToolCompleted || p.Status == loom.ToolError {
			// The result is in the call's state already.
			b.res.Skip("tool-result")
			break
		}
		out, _ := json.Marshal(plain(m.Content))
		p.Status, p.Output = loom.ToolCompleted, out
	default:
		b.res.Skip("unknown:" + importer.TypeName(m.Role))
	}
	if sum := strings.TrimSpace(it.ConversationSummary); sum != "" {
		// Continue's compaction: the summary stands for the history up
		// to this item from now on.
		b.add(&loom.Message{ID: mid + "/summary", Role: loom.RoleSummary, Parts: []loom.Part{{ID: mid + "/summary/0", Type: loom.PartText, Text: sum}}, Usage: loom.Usage{Compactions: 1}})
	}
}

// add keeps msg when it holds anything.
func (b *builder) add(msg *loom.Message) {
	if len(msg.Parts) == 0 {
		b.res.Skip("empty-" + msg.Role + "-message")
		return
	}
	b.msgs = append(b.msgs, msg)
	for i := range msg.Parts {
		if p := &msg.Parts[i]; p.Type == loom.PartTool {
			b.calls[p.CallID] = p
		}
	}
}

// tools maps an assistant item's tool calls: their states when Continue
// kept them (with the output), else the calls in the message.
func (b *builder) tools(mid string, it *historyItem) []loom.Part {
	states := it.ToolCallStates
	if len(states) == 0 && it.ToolCallState != nil {
		states = []toolCallState{*it.ToolCallState}
	}
	byID := map[string]*toolCallState{}
	for i := range states {
		byID[cmp.Or(states[i].ToolCallID, states[i].ToolCall.ID)] = &states[i]
	}
	calls := it.Message.ToolCalls
	if len(calls) == 0 {
		for _, st := range states {
			calls = append(calls, st.ToolCall)
		}
	}
	var out []loom.Part
	for j, c := range calls {
		st := byID[c.ID]
		if st != nil && c.Function.Name == "" {
			c = st.ToolCall
		}
		pid := mid + "/tool/" + strconv.Itoa(j)
		p := loom.Part{ID: pid, Type: loom.PartTool, CallID: cmp.Or(c.ID, pid), Name: cmp.Or(c.Function.Name, "unknown"), Status: loom.ToolRunning, Input: input(c.Function.Arguments, st)}
		if st != nil {
			text := outputText(st.Output)
			switch st.Status {
			case "done":
				b, _ := json.Marshal(text)
				p.Status, p.Output = loom.ToolCompleted, b
			case "errored":
				p.Status, p.Error = loom.ToolError, cmp.Or(text, "errored")
			case "canceled":
				p.Status, p.Error = loom.ToolError, cmp.Or(text, "canceled")
			}
		}
		out = append(out, p)
	}
	return out
}

// input is a call's arguments as a JSON object: Continue's parsed
// arguments, else the arguments the model sent when they are one, else
// {"arguments": what it sent}.
func input(args string, st *toolCallState) json.RawMessage {
	if st != nil {
		if a := importer.CompactJSON(st.ParsedArgs); a != nil && a[0] == '{' {
			return a
		}
	}
	if a := importer.CompactJSON(json.RawMessage(args)); a != nil && a[0] == '{' {
		return a
	}
	if strings.TrimSpace(args) == "" {
		return json.RawMessage(`{}`)
	}
	b, _ := json.Marshal(map[string]string{"arguments": args})
	return b
}

func outputText(items []contextItem) string {
	var parts []string
	for _, c := range items {
		if c.Content != "" {
			parts = append(parts, c.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// content maps a message's content: a string, or a list of parts (text
// and images).
func content(mid string, raw json.RawMessage) []loom.Part {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		var t string
		if json.Unmarshal(raw, &t) == nil && strings.TrimSpace(t) != "" {
			return []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: t}}
		}
		return nil
	}
	var items []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"imageUrl"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out []loom.Part
	for i, it := range items {
		pid := mid + "/" + strconv.Itoa(i)
		switch {
		case it.Type == "text" && strings.TrimSpace(it.Text) != "":
			out = append(out, loom.Part{ID: pid, Type: loom.PartText, Text: it.Text})
		case it.Type == "imageUrl" && it.ImageURL.URL != "":
			out = append(out, loom.Part{ID: pid, Type: loom.PartFile, URL: it.ImageURL.URL, Mime: mimeOf(it.ImageURL.URL)})
		}
	}
	return out
}

// plain is content as text: the string, or its text parts joined.
func plain(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []string
	for _, p := range content("", raw) {
		if p.Type == loom.PartText {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (u *usageJSON) loom() loom.Usage {
	out := loom.Usage{
		InputTokens:  importer.Tokens(max(u.PromptTokens, u.SnakePrompt)),
		OutputTokens: importer.Tokens(max(u.CompletionTokens, u.SnakeCompletion)),
	}
	for _, d := range []*details{u.PromptTokensDetails, u.SnakePromptDetails} {
		if d != nil {
			out.CacheReadTokens = max(out.CacheReadTokens, importer.Tokens(max(d.CachedTokens, d.SnakeCached)))
			out.CacheWriteTokens = max(out.CacheWriteTokens, importer.Tokens(d.CacheWriteTokens))
		}
	}
	for _, d := range []*details{u.CompletionTokensDetails, u.SnakeCompletionDetails} {
		if d != nil {
			out.ReasoningTokens = max(out.ReasoningTokens, importer.Tokens(max(d.ReasoningTokens, d.SnakeReasoning)))
		}
	}
	// OpenAI's prompt tokens include the cached ones; loom's input does
	// not.
	out.InputTokens = max(out.InputTokens-out.CacheReadTokens, 0)
	return out
}

func mimeOf(u string) string {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		if m, _, ok := strings.Cut(rest, ";"); ok {
			return m
		}
	}
	return ""
}
