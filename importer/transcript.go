package importer

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// Transcript gathers a session's messages as a reader makes them, in
// the order of its file: each tool call waits, by its call id, for the
// result that completes it, whichever later record holds it. What the
// readers of agents that keep a plain list of messages share (Mistral
// Vibe, Hermes, Grok, CodeBuddy, Forge, Amazon Q, Auggie, Muse).
type Transcript struct {
	Res  *Result
	Msgs []*loom.Message
	// calls locates each call waiting for its result: message and part.
	calls map[string][2]int
	// broken says a record between the last message and the next could
	// not be read (Break).
	broken bool
}

// Break says a record after the last message could not be read: the
// next reply is a message of its own, never joined to the one before
// the lost record (which was most likely the prompt between them).
func (t *Transcript) Break() { t.broken = true }

// Add appends m, counting it as skipped ("empty-<role>-message") when
// it has no part; its tool parts wait for their results. It reports
// whether m was kept.
func (t *Transcript) Add(m *loom.Message) bool {
	if len(m.Parts) == 0 {
		t.Res.Skip("empty-" + m.Role + "-message")
		return false
	}
	if m.CompletedAt == nil && !m.CreatedAt.IsZero() {
		at := m.CreatedAt
		m.CompletedAt = &at
	}
	for i, p := range m.Parts {
		if p.Type == loom.PartTool && p.CallID != "" {
			if t.calls == nil {
				t.calls = map[string][2]int{}
			}
			t.calls[p.CallID] = [2]int{len(t.Msgs), i}
		}
	}
	t.Msgs = append(t.Msgs, m)
	t.broken = false
	return true
}

// Last is the last message added, nil before any.
func (t *Transcript) Last() *loom.Message {
	if len(t.Msgs) == 0 {
		return nil
	}
	return t.Msgs[len(t.Msgs)-1]
}

// Complete gives the call callID its result: output as text, an error
// when failed. A result whose call is not in the transcript is counted
// as skipped ("orphan-tool-result"); it reports whether the call was
// found.
func (t *Transcript) Complete(callID, output string, failed bool, at time.Time) bool {
	loc, ok := t.calls[callID]
	if !ok || callID == "" {
		t.Res.Skip("orphan-tool-result")
		return false
	}
	p := &t.Msgs[loc[0]].Parts[loc[1]]
	if failed {
		p.Status, p.Error = loom.ToolError, cmp.Or(output, "failed")
	} else {
		out, _ := json.Marshal(output)
		p.Status, p.Output = loom.ToolCompleted, out
	}
	if !at.IsZero() {
		p.EndedAt = &at
	}
	delete(t.calls, callID)
	return true
}

// ToolCall is a running tool part: id, the tool's call id (the part's
// id when the file has none), its name and its arguments as the file
// holds them (an object, or JSON in a string).
func ToolCall(id, callID, name string, args json.RawMessage) loom.Part {
	args = bytes.TrimSpace(args)
	var s string
	if len(args) > 0 && args[0] == '"' && json.Unmarshal(args, &s) == nil {
		args = json.RawMessage(s)
		if !json.Valid(args) {
			args, _ = json.Marshal(s)
		}
	}
	return loom.Part{ID: id, Type: loom.PartTool, CallID: cmp.Or(LineID(callID), id), Name: cmp.Or(strings.TrimSpace(name), "unknown"), Status: loom.ToolRunning, Input: ArgsObject(args)}
}

// TextParts is content as the chat APIs write it: a string, or a list
// of parts whose text is in text (text, input_text, output_text, and
// reasoning's summary_text and reasoning_text);
// each non-blank text is a part of type typ, with ids <mid>/<n>.
func TextParts(mid, typ string, raw json.RawMessage) []loom.Part {
	var out []loom.Part
	add := func(s string) {
		if strings.TrimSpace(s) != "" {
			out = append(out, loom.Part{ID: mid + "/" + strconv.Itoa(len(out)), Type: typ, Text: s})
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		add(s)
		return out
	}
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &items) == nil {
		for _, it := range items {
			switch it.Type {
			case "", "text", "input_text", "output_text", "summary_text", "reasoning_text":
				add(it.Text)
			}
		}
	}
	return out
}

// Text is the texts of parts joined by newlines: a tool result's
// output.
func Text(parts []loom.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// Session is the transcript as the session id, its messages dated from
// the first to the last; nil, counted as an empty session, when it has
// none.
func (t *Transcript) Session(id, path string) *Session {
	if len(t.Msgs) == 0 {
		t.Res.Skip("empty-session")
		return nil
	}
	s := &Session{SourceID: id, Kind: loom.KindMain, Path: path, Messages: t.Msgs}
	s.CreatedAt, s.UpdatedAt = t.Msgs[0].CreatedAt, t.Msgs[len(t.Msgs)-1].CreatedAt
	return s
}

// ChatLine is one message in the chat-completions form that several
// agents keep their transcripts in (Mistral Vibe, Hermes): a role, its
// content, reasoning in clear, tool calls, and a tool message's call.
type ChatLine struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Reasoning string          `json:"reasoning_content"`
	// Thinking is the reasoning under the name some write it as.
	Thinking   string     `json:"reasoning"`
	ToolCalls  []ChatCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
}

// ChatCall is a tool call of a ChatLine: its id, and the function
// called.
type ChatCall struct {
	ID       string       `json:"id"`
	Function ChatFunction `json:"function"`
}

// ChatFunction is the function a ChatCall calls: its name, and its
// arguments.
type ChatFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// NamedCall is a tool call as some agents write it, the tool's name
// and arguments beside its id.
type NamedCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// FlatCall is a tool call that some agents write either as a NamedCall
// or as a ChatCall, its name and arguments in its function.
type FlatCall struct {
	NamedCall
	Function ChatFunction `json:"function"`
}

// AddChat adds l as the message mid made at at: a system, user or
// assistant message with its text, reasoning and tool calls (a user
// message the user did not type, injected, is a system message); a
// tool message completes its call instead. An unknown role is counted
// as skipped. It returns the message added, nil when none was.
func (t *Transcript) AddChat(mid string, l ChatLine, at time.Time, injected bool) *loom.Message {
	m := &loom.Message{ID: mid, CreatedAt: at}
	switch l.Role {
	case "tool":
		t.Complete(l.ToolCallID, Text(TextParts("", loom.PartText, l.Content)), false, at)
		return nil
	case "system":
		m.Role = loom.RoleSystem
	case "user":
		m.Role = loom.RoleUser
		if injected {
			m.Role = loom.RoleSystem
		}
	case "assistant":
		m.Role = loom.RoleAssistant
		if r := cmp.Or(l.Reasoning, l.Thinking); strings.TrimSpace(r) != "" {
			m.Parts = append(m.Parts, loom.Part{ID: mid + "/reasoning", Type: loom.PartReasoning, Text: r})
		}
	default:
		t.Res.Skip("unknown:" + TypeName(l.Role))
		return nil
	}
	m.Parts = append(m.Parts, TextParts(mid, loom.PartText, l.Content)...)
	for i, c := range l.ToolCalls {
		m.Parts = append(m.Parts, ToolCall(mid+"/call/"+strconv.Itoa(i), c.ID, c.Function.Name, c.Function.Arguments))
	}
	if !t.Add(m) {
		return nil
	}
	return m
}

// ReadSmall reads the whole of a file of at most max bytes (a session's
// metadata, a one-document session): larger is an error.
func ReadSmall(path string, max int64) ([]byte, error) {
	f, _, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// ReadDocument reads the whole of a one-document session file (at most
// MaxDocument bytes) and its modification time, in UTC.
func ReadDocument(path string) ([]byte, time.Time, error) {
	f, fi, err := Open(path, MaxDocument)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDocument))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return data, fi.ModTime().UTC(), nil
}

// ReadWhole is the Read of a format whose session file is one document
// read whole: it reads b's file (ReadDocument) and hands its name, bytes
// and modification time to parse, which turns what it cannot read into
// problems of the result. An error names tool.
func ReadWhole(tool string, b Bundle, parse func(name string, data []byte, modified time.Time) *Result) (*Result, error) {
	name := b.Name()
	data, modified, err := ReadDocument(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return parse(name, data, modified), nil
}

// Join adds parts to the last message when it is role's, else as a new
// message mid of role made at at: a reply whose reasoning, text and
// calls a file keeps as records of their own. Parts joined to a message
// get ids under its id; tool parts wait for their results.
func (t *Transcript) Join(mid, role string, at time.Time, parts ...loom.Part) *loom.Message {
	if len(parts) == 0 {
		return t.Last()
	}
	m := t.Last()
	if m == nil || m.Role != role || t.broken {
		m = &loom.Message{ID: mid, Role: role, CreatedAt: at, Parts: parts}
		t.Add(m)
		return m
	}
	for _, p := range parts {
		// Under the message's id, as every part's is.
		p.ID = m.ID + "/" + p.ID
		if p.Type == loom.PartTool && p.CallID != "" {
			if t.calls == nil {
				t.calls = map[string][2]int{}
			}
			t.calls[p.CallID] = [2]int{len(t.Msgs) - 1, len(m.Parts)}
		}
		m.Parts = append(m.Parts, p)
	}
	return m
}
