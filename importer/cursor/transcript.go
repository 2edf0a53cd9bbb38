package cursor

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// A transcript of Cursor's agent CLI is JSONL, one line a message in the
// form of Anthropic's Messages API ({"role", "message": {"content":
// [blocks]}}), or, in older versions, text: "user:" and "assistant:"
// lines, and in a reply [Thinking], [Tool call] <name> and [Tool result]
// <name> blocks whose bodies are indented. Neither records times or
// message ids.

// line is one line of a JSONL transcript.
type line struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Message struct {
		Content json.RawMessage `json:"content"`
		Model   string          `json:"model"`
	} `json:"message"`
}

// block is one content block.
type block struct {
	importer.APIBlock
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// readTranscript reads one transcript file as a session.
func readTranscript(ctx context.Context, path string, t transcript, res *importer.Result) (*importer.Session, error) {
	f, fi, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("cursor: %w", err)
	}
	defer f.Close()
	at := fi.ModTime().UTC()
	b := newBuilder(res, path, t.id, at)
	isText := filepath.Ext(path) == ".txt"
	tp := &textParser{b: b}
	// Read as importer.SessionLines reads, but with each line's
	// indentation, which the text form's blocks need.
	had, lines := len(res.Problems), 0
	err = importer.Lines(ctx, f, func(n int, raw []byte) error {
		if len(bytes.TrimSpace(raw)) > 0 {
			lines++
		}
		if isText {
			tp.line(n, string(raw))
			return nil
		}
		b.jsonLine(n, raw)
		return nil
	}, res.TooLong(path))
	if err != nil {
		return nil, fmt.Errorf("cursor: %s: %w", path, err)
	}
	// Garbage or an empty file is one line even beside the transcripts
	// of its sub-agents, which are read.
	res.LinesRead(path, had, lines)
	tp.finish()
	b.endTurn()
	if len(b.msgs) == 0 {
		res.Skip("empty-transcript")
		return nil, nil
	}
	s := &importer.Session{
		SourceID:  t.id,
		Kind:      loom.KindMain,
		Path:      path,
		CreatedAt: at,
		UpdatedAt: at,
		Messages:  b.msgs,
	}
	if t.parent != "" {
		s.Kind, s.ParentSourceID = loom.KindSubagent, t.parent
	}
	if t.dir != "" {
		s.Cwd = projectDir(filepath.Base(filepath.Dir(t.dir)))
	}
	if strings.ContainsAny(s.SourceID, "\r\n") {
		return nil, fmt.Errorf("cursor: %s: not a usable session id", path)
	}
	return s, nil
}

// builder builds a transcript's messages: one per line (or text block),
// named <session>:<line>; a tool result completes the call it answers.
type builder struct {
	res     *importer.Result
	path    string
	session string
	at      time.Time
	msgs    []*loom.Message
	// open are the calls without a result yet, in order.
	open []callRef
}

type callRef struct{ msg, part int }

func newBuilder(res *importer.Result, path, session string, at time.Time) *builder {
	return &builder{res: res, path: path, session: session, at: at}
}

func (b *builder) message(n int, role string) *loom.Message {
	at := b.at
	return &loom.Message{ID: b.session + ":" + strconv.Itoa(n), Role: role, CreatedAt: at, CompletedAt: &at}
}

func (b *builder) add(m *loom.Message) {
	if len(m.Parts) > 0 {
		b.msgs = append(b.msgs, m)
	}
}

// jsonLine maps one JSONL line.
func (b *builder) jsonLine(n int, raw []byte) {
	var l line
	if !b.res.DecodeLine(b.path, n, raw, &l) {
		return
	}
	var m *loom.Message
	switch l.Role {
	case "user":
		m = b.message(n, loom.RoleUser)
	case "assistant":
		m = b.message(n, loom.RoleAssistant)
		m.Model = l.Message.Model
	case "":
		if l.Type == "turn_ended" {
			b.endTurn()
		}
		b.res.Skip(importer.TypeName(cmp.Or(l.Type, "untyped")))
		return
	default:
		b.res.Skip("unknown:" + importer.TypeName(l.Role))
		return
	}
	var blocks []json.RawMessage
	var text string
	switch c := bytes.TrimSpace(l.Message.Content); {
	case len(c) > 0 && c[0] == '"':
		_ = json.Unmarshal(c, &text)
		blocks = []json.RawMessage{mustJSON(map[string]string{"type": "text", "text": text})}
	case json.Unmarshal(c, &blocks) != nil:
		b.res.Problemf(b.path, n, "content is neither text nor a list of blocks")
		return
	}
	if m.Role == loom.RoleUser && hasPrompt(blocks) {
		b.endTurn()
	}
	for i, raw := range blocks {
		var bl block
		if json.Unmarshal(raw, &bl) != nil {
			b.res.Problemf(b.path, n, "block "+strconv.Itoa(i)+" is not an object")
			continue
		}
		b.block(n, m, m.ID+"/"+strconv.Itoa(i), bl)
	}
	b.add(m)
}

// hasPrompt is whether a user line holds text: a new prompt, which ends
// the turn before it.
func hasPrompt(blocks []json.RawMessage) bool {
	for _, raw := range blocks {
		var bl block
		if json.Unmarshal(raw, &bl) == nil && bl.Type == "text" {
			return true
		}
	}
	return false
}

func (b *builder) block(n int, m *loom.Message, id string, bl block) {
	if bl.Type == "text" && m.Role == loom.RoleUser {
		bl.Text = userQuery(bl.Text)
	}
	if bl.AddContent(b.res, m, id) {
		return
	}
	switch bl.Type {
	case "tool_use":
		input := json.RawMessage(`{}`)
		if in := importer.CompactJSON(bl.Input); in != nil && in[0] == '{' {
			input = in
		}
		b.call(len(b.msgs), m, id, bl.ID, bl.Name, input)
	case "tool_result":
		b.result(bl.ToolUseID, "", contentText(bl.Content), bl.IsError)
	case "":
		b.res.Problemf(b.path, n, "a block without a type")
	default:
		b.res.Skip("unknown:" + importer.TypeName(bl.Type))
	}
}

// call adds a tool call to an assistant message: running until its
// result comes or its turn ends.
func (b *builder) call(mi int, m *loom.Message, id, callID, name string, input json.RawMessage) {
	if m.Role != loom.RoleAssistant {
		b.res.Skip("tool-call-in-" + m.Role)
		return
	}
	b.open = append(b.open, callRef{msg: mi, part: len(m.Parts)})
	m.Parts = append(m.Parts, loom.Part{ID: id, Type: loom.PartTool, CallID: cmp.Or(callID, id), Name: cmp.Or(name, "unknown"), Status: loom.ToolRunning, Input: input})
}

// result completes the open call with id callID; without an id (Cursor
// writes none for some calls), the first open call named name, or the
// first open one.
func (b *builder) result(callID, name, out string, isError bool) {
	pick := -1
	for i, r := range b.open {
		if r.msg >= len(b.msgs) {
			continue
		}
		p := b.msgs[r.msg].Parts[r.part]
		if (callID != "" && p.CallID == callID) || (callID == "" && (name == "" || p.Name == name)) {
			pick = i
			break
		}
	}
	if pick < 0 {
		b.res.Skip("orphan-tool-result")
		return
	}
	r := b.open[pick]
	b.open = append(b.open[:pick], b.open[pick+1:]...)
	p := &b.msgs[r.msg].Parts[r.part]
	o, _ := json.Marshal(out)
	p.Status, p.Output = loom.ToolCompleted, o
	if isError {
		p.Status, p.Error = loom.ToolError, cmp.Or(out, "error")
	}
}

// endTurn closes the calls of a turn that ended without their results:
// Cursor does not write every tool's result into its transcript.
func (b *builder) endTurn() {
	for _, r := range b.open {
		if r.msg < len(b.msgs) {
			p := &b.msgs[r.msg].Parts[r.part]
			p.Status, p.Metadata = loom.ToolCompleted, importer.Meta("result", "not recorded")
		}
	}
	b.open = nil
}

// userQuery is the prompt inside Cursor's <user_query> tags, or the
// whole text when there are none.
func userQuery(text string) string {
	start := strings.Index(text, "<user_query>")
	end := strings.LastIndex(text, "</user_query>")
	if start >= 0 && end > start {
		return strings.TrimSpace(text[start+len("<user_query>") : end])
	}
	return text
}

// contentText is a tool result's content: text, or text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return string(importer.CompactJSON(raw))
	}
	var parts []string
	for _, bl := range blocks {
		if bl.Type == "text" {
			parts = append(parts, bl.Text)
		} else {
			parts = append(parts, "["+importer.TypeName(bl.Type)+"]")
		}
	}
	return strings.Join(parts, "\n")
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// textParser reads the text form of a transcript.
type textParser struct {
	b *builder
	m *loom.Message
	// kind is the block being read: "" (text), "thinking", "call" or
	// "result"; name its tool, body its lines, start its line.
	kind, name string
	body       []string
	start      int
}

func (tp *textParser) line(n int, s string) {
	trimmed := strings.TrimSpace(s)
	switch {
	case trimmed == "user:" || trimmed == "assistant:":
		tp.finish()
		role := loom.RoleAssistant
		if trimmed == "user:" {
			role = loom.RoleUser
			tp.b.endTurn()
		}
		tp.m = tp.b.message(n, role)
		// In the list while it is read, for its calls' results.
		tp.b.msgs = append(tp.b.msgs, tp.m)
		return
	case tp.m == nil:
		if trimmed != "" {
			tp.b.res.Problemf(tp.b.path, n, "text before the first user: or assistant: line")
		}
		return
	}
	if tp.m.Role == loom.RoleAssistant {
		for _, k := range []struct{ prefix, kind string }{{"[Thinking]", "thinking"}, {"[Tool call]", "call"}, {"[Tool result]", "result"}} {
			if rest, ok := strings.CutPrefix(trimmed, k.prefix); ok {
				tp.flush()
				tp.kind, tp.name, tp.start = k.kind, strings.TrimSpace(rest), n
				if k.kind == "thinking" && tp.name != "" {
					tp.body = append(tp.body, tp.name)
				}
				return
			}
		}
		// A block's body is indented; a line at the margin ends it.
		if tp.kind != "" && trimmed != "" && s[0] != ' ' && s[0] != '\t' {
			tp.flush()
		}
	}
	if tp.kind == "" && len(tp.body) == 0 {
		tp.start = n
	}
	tp.body = append(tp.body, s)
}

// finish ends the last message.
func (tp *textParser) finish() {
	tp.flush()
	if tp.m != nil && len(tp.m.Parts) == 0 {
		tp.b.msgs = tp.b.msgs[:len(tp.b.msgs)-1]
	}
	tp.m = nil
}

// flush ends the block being read.
func (tp *textParser) flush() {
	if tp.m == nil {
		tp.kind, tp.body = "", nil
		return
	}
	id := tp.m.ID + "/" + strconv.Itoa(len(tp.m.Parts))
	text := strings.TrimSpace(dedent(tp.body))
	switch tp.kind {
	case "":
		if tp.m.Role == loom.RoleUser {
			text = userQuery(text)
		}
		if text != "" {
			tp.m.Parts = append(tp.m.Parts, loom.Part{ID: id, Type: loom.PartText, Text: text})
		}
	case "thinking":
		if text != "" {
			tp.m.Parts = append(tp.m.Parts, loom.Part{ID: id, Type: loom.PartReasoning, Text: text})
		}
	case "call":
		tp.b.call(len(tp.b.msgs)-1, tp.m, id, "", tp.name, textInput(text))
	case "result":
		tp.b.result("", tp.name, text, false)
	}
	tp.kind, tp.name, tp.body = "", "", nil
}

// textInput is a [Tool call] block's body as JSON: the body when it is
// an object, else its "key: value" (or key=value) lines, else the text.
func textInput(text string) json.RawMessage {
	if in := importer.CompactJSON(json.RawMessage(text)); in != nil && in[0] == '{' {
		return in
	}
	if text == "" {
		return json.RawMessage(`{}`)
	}
	params := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if k2, v2, ok2 := strings.Cut(l, "="); ok2 && (!ok || len(k2) < len(k)) {
			k, v, ok = k2, v2, true
		}
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return mustJSON(map[string]string{"input": text})
		}
		params[k] = strings.TrimSpace(v)
	}
	return mustJSON(params)
}

// dedent removes the indentation the lines share.
func dedent(lines []string) string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		out[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(out, "\n")
}
