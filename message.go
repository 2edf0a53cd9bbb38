package loom

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	RoleSystem    = "system"
	RoleSummary   = "summary"
)

// ValidRole reports whether r is a known message role.
func ValidRole(r string) bool {
	switch r {
	case RoleUser, RoleAssistant, RoleTool, RoleSystem, RoleSummary:
		return true
	}
	return false
}

// Message is one whole, completed unit of a session. Seq numbers a
// session's messages 1, 2, 3 … without gaps.
type Message struct {
	ID          string        `json:"id"`
	SessionID   string        `json:"session_id"`
	Seq         int64         `json:"seq"`
	Role        string        `json:"role"`
	Parts       []Part        `json:"parts"`
	Model       string        `json:"model"`
	Provider    string        `json:"provider"`
	Usage       Usage         `json:"usage"`
	Error       *MessageError `json:"error"`
	CreatedAt   time.Time     `json:"created_at"`
	CompletedAt *time.Time    `json:"completed_at"`
	// Turn is the turn the message belongs to: user messages open turns.
	Turn int `json:"turn,omitempty"`
	// Call is, for an imported reply, the agent's id of the model call
	// that produced it, prefixed with the agent's name (claude-code:
	// message.id:requestId), by which a call written into two files is
	// counted once (ImportWrite.Calls). It is not stored with the
	// message.
	Call string `json:"-"`
}

// MessageError records why producing a message failed.
type MessageError struct {
	Message string `json:"message"`
	Type    string `json:"type,omitempty"`
}

// Validate checks a message before it is stored.
func (m *Message) Validate() error {
	if !ValidRole(m.Role) {
		return Errorf(EINVALID, "unknown message role %q", m.Role)
	}
	for i := range m.Parts {
		if err := m.Parts[i].Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Text returns the concatenated text parts of the message.
func (m *Message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == PartText {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Size is about the bytes the message's parts take in a store: their
// text, raw JSON and errors, without the fields of fixed size. Writers
// bound their batches by it.
func (m *Message) Size() int {
	n := 0
	for i := range m.Parts {
		p := &m.Parts[i]
		n += len(p.Text) + len(p.Input) + len(p.Output) + len(p.Metadata) + len(p.Error)
	}
	return n
}

// SearchText returns what full-text search indexes for the message: text,
// reasoning, and tool inputs, outputs and errors.
func (m *Message) SearchText() string {
	var b strings.Builder
	add := func(s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(s)
	}
	for _, p := range m.Parts {
		switch p.Type {
		case PartText, PartReasoning:
			add(p.Text)
		case PartTool:
			add(p.Name)
			add(JSONText(p.Input))
			add(JSONText(p.Output))
			add(p.Error)
		case PartFile:
			add(p.Filename)
		case PartAgent:
			add(p.Name)
		}
	}
	return b.String()
}

// JSONText turns a JSON value into text, for search and for a model's
// tool results: a string as its text, anything else as its JSON, nothing
// for no value or null.
func JSONText(r json.RawMessage) string {
	if len(r) == 0 || string(r) == "null" {
		return ""
	}
	if s, ok := JSONString(r); ok {
		return s
	}
	return string(r)
}

// JSONString is the string r holds, as json.Unmarshal into a string
// gives it, and false when that fails (r is not a JSON string; null
// is the empty one, as it is to json.Unmarshal). A string in valid UTF-8
// without control characters (nearly every one an agent writes) is
// decoded here in one pass, without the decoder's check of
// the whole value first; any other goes through json.Unmarshal.
func JSONString(r []byte) (string, bool) {
	if s, ok := plainJSONString(r); ok {
		return s, true
	}
	if v := bytes.TrimLeft(r, " \t\r\n"); len(v) == 0 || v[0] != '"' && v[0] != 'n' {
		// An object, array, number or boolean, or not JSON: no string,
		// which json.Unmarshal would say after checking all of r.
		return "", false
	}
	var s string
	if json.Unmarshal(r, &s) != nil {
		return "", false
	}
	return s, true
}

// plainJSONString decodes r when it is one JSON string in valid UTF-8
// without control characters, as encoding/json decodes it; false
// otherwise.
func plainJSONString(r []byte) (string, bool) {
	n := len(r)
	if n < 2 || r[0] != '"' || r[n-1] != '"' {
		return "", false
	}
	in := r[1 : n-1]
	escapes := false
	for i := 0; i < len(in); i++ {
		if c := in[i]; c >= ' ' && c != '"' && c != '\\' {
			continue
		}
		switch c := in[i]; {
		case c < ' ' || c == '"':
			return "", false
		case c == '\\':
			if i+1 >= len(in) {
				return "", false // it escapes the closing quote
			}
			switch in[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if hex4(in[i:]) < 0 {
					return "", false
				}
				i += 5
			default:
				return "", false
			}
			escapes = true
		}
	}
	if !utf8.Valid(in) {
		return "", false
	}
	if !escapes {
		return string(in), true
	}
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		switch e := in[i+1]; e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			// As encoding/json: a surrogate followed by the escape of
			// the other of its pair is one rune, else U+FFFD.
			rr := hex4(in[i:])
			i += 6
			if utf16.IsSurrogate(rr) {
				if dec := utf16.DecodeRune(rr, hex4(in[i:])); dec != unicode.ReplacementChar {
					rr = dec
					i += 6
				} else {
					rr = unicode.ReplacementChar
				}
			}
			out = utf8.AppendRune(out, rr)
			i-- // the loop's i++
			continue
		default: // " \\ /
			out = append(out, e)
		}
		i++
	}
	return string(out), true
}

// hex4 is the rune of the \uXXXX escape b starts with, -1 when it does
// not start with one.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// Part types.
const (
	PartText       = "text"
	PartReasoning  = "reasoning"
	PartTool       = "tool"
	PartFile       = "file"
	PartAgent      = "agent"
	PartStepStart  = "step-start"
	PartStepFinish = "step-finish"
)

// Tool part statuses: pending → running → completed | error.
const (
	ToolPending   = "pending"
	ToolRunning   = "running"
	ToolCompleted = "completed"
	ToolError     = "error"
)

// Interrupted is the error given to tool calls whose process died.
const Interrupted = "interrupted"

// Part is typed content of a message. Which fields are set depends on
// Type; the JSON shape carries only the fields of its type.
type Part struct {
	ID   string `json:"id"`
	Type string `json:"type"`

	// text, reasoning
	Text string `json:"text,omitempty"`

	// tool
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"` // tool name; agent name for agent parts
	Status    string          `json:"status,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
	Title     string          `json:"title,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	StartedAt *time.Time      `json:"started_at,omitempty"`
	EndedAt   *time.Time      `json:"ended_at,omitempty"`

	// file
	Mime     string      `json:"mime,omitempty"`
	Filename string      `json:"filename,omitempty"`
	URL      string      `json:"url,omitempty"`
	Source   *FileSource `json:"source,omitempty"`

	// agent: the sub-agent's child session
	SessionID string `json:"session_id,omitempty"`

	// step-finish: tokens and cost of one model call
	Usage *Usage `json:"usage,omitempty"`
}

// FileSource locates a file part's content: a path and an optional range.
type FileSource struct {
	Type  string `json:"type,omitempty"` // file or symbol
	Path  string `json:"path"`
	Text  string `json:"text,omitempty"`
	Start int    `json:"start,omitempty"`
	End   int    `json:"end,omitempty"`
}

// Validate checks that a part has a known type and what its type needs.
func (p *Part) Validate() error {
	switch p.Type {
	case PartText, PartReasoning, PartStepStart, PartStepFinish, PartFile:
	case PartAgent:
		if p.Name == "" {
			return Errorf(EINVALID, "agent part needs a name")
		}
	case PartTool:
		if p.CallID == "" || p.Name == "" {
			return Errorf(EINVALID, "tool part needs a call id and a tool name")
		}
		switch p.Status {
		case ToolPending, ToolRunning, ToolCompleted, ToolError:
		default:
			return Errorf(EINVALID, "tool part %s has unknown status %q", p.CallID, p.Status)
		}
		if len(p.Input) > 0 && !ValidJSON(p.Input) {
			return Errorf(EINVALID, "tool part %s input is not JSON", p.CallID)
		}
		if len(p.Output) > 0 && !ValidJSON(p.Output) {
			return Errorf(EINVALID, "tool part %s output is not JSON", p.CallID)
		}
	default:
		return Errorf(EINVALID, "unknown part type %q", p.Type)
	}
	if len(p.Metadata) > 0 && !ValidJSON(p.Metadata) {
		return Errorf(EINVALID, "part metadata is not JSON")
	}
	return nil
}

// MessageQuery selects a window of a session's messages. With Limit set it
// returns the newest Limit messages (before Before, after After), always in
// chronological order.
type MessageQuery struct {
	Limit  int
	Before int64 // seq < Before when > 0
	After  int64 // seq > After when > 0
	// Turn keeps the messages of this turn when > 0: its user message
	// and everything up to the next one.
	Turn int
	// Oldest, with Limit, takes the oldest Limit messages of the window
	// instead of the newest: a turn or what follows After read from its
	// start.
	Oldest bool
	// Salvage reads a message whose stored parts no longer decode (a
	// damaged store) with DamagedParts in their place instead of failing
	// the read: what rescuing a damaged store exports.
	Salvage bool
}

// DamagedParts are the parts a message is read with, under
// MessageQuery.Salvage, when its own could not be decoded (err): one
// text part saying so.
func DamagedParts(err error) []Part {
	return []Part{{ID: NewID(), Type: PartText,
		Text: "[loom could not read this message: its parts are damaged in the store (" + err.Error() + ")]"}}
}
