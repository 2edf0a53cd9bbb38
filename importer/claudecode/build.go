package claudecode

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// provider is the provider of the models Claude Code calls.
const provider = "anthropic"

// result is a tool_result block and the line that carries it.
type result struct {
	rec  *record
	idx  int // block index in rec
	used bool
}

// agentLink is a sub-agent session that a tool call or a compaction ran.
type agentLink struct {
	sourceID string
	name     string
	// agentType is the subagent_type of the call that ran it, "" when
	// it names none.
	agentType string
}

// builder turns the lines of one tree into messages, one key at a time.
type builder struct {
	res     *importer.Result
	t       *tree
	results map[string]*result
	// agents links tool calls (by call id) and compactions (by the
	// compact_boundary's id) to the sub-agent sessions they ran.
	agents map[string]agentLink
	// live is the key of the main chain's last message: a call there
	// without a result is still running; elsewhere it was interrupted.
	live  map[string]bool
	built map[string][]*loom.Message
	// commands marks the ids of slash-command messages, whose role
	// depends on what follows them, and of the prompts commands expand
	// to (see settleCommands).
	commands map[string]byte
}

func newBuilder(t *tree, res *importer.Result) *builder {
	b := &builder{
		res:      res,
		t:        t,
		results:  map[string]*result{},
		agents:   map[string]agentLink{},
		live:     map[string]bool{},
		built:    map[string][]*loom.Message{},
		commands: map[string]byte{},
	}
	for _, r := range t.recs {
		for i, bl := range r.blocks {
			if !isResultBlock(bl) {
				continue
			}
			if _, dup := b.results[bl.ToolUseID]; dup {
				res.Skip("tool_result:duplicate")
				continue
			}
			b.results[bl.ToolUseID] = &result{rec: r, idx: i}
		}
	}
	return b
}

// unused counts the tool results no call took.
func (b *builder) unused() {
	for _, r := range b.results {
		if !r.used {
			b.res.Skip("tool_result:unmatched")
		}
	}
}

// messages are the messages along a path of nodes, each key once.
func (b *builder) messages(path []int) []*loom.Message {
	var out []*loom.Message
	seen := map[string]bool{}
	for _, n := range path {
		k := b.t.nodes[n].key
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, b.build(k)...)
	}
	return out
}

// build makes the messages of one key, once.
func (b *builder) build(key string) []*loom.Message {
	if m, ok := b.built[key]; ok {
		return m
	}
	var recs []*record
	for _, i := range b.t.byKey[key] {
		recs = append(recs, b.t.recs[i])
	}
	var msgs []*loom.Message
	if len(recs) > 0 {
		switch key[0] {
		case 'a':
			msgs = b.assistant(key, recs)
		case 'u':
			msgs = b.user(recs[0])
		case 'c':
			msgs = b.compaction(recs)
		case 's':
			msgs = b.system(recs[0])
		}
	}
	b.built[key] = msgs
	return msgs
}

// assistant merges the lines of one reply into one message.
func (b *builder) assistant(key string, recs []*record) []*loom.Message {
	first, last := recs[0], recs[len(recs)-1]
	done := last.ts
	m := &loom.Message{
		ID:          first.id,
		Role:        loom.RoleAssistant,
		Provider:    provider,
		CreatedAt:   first.ts,
		CompletedAt: &done,
		Usage:       loom.Usage{APICalls: 1},
	}
	synthetic := false
	for _, r := range recs {
		msg := r.Message
		if msg.Model == "<synthetic>" {
			synthetic = true
		} else if msg.Model != "" {
			m.Model = msg.Model
		}
		if u := msg.Usage; u != nil {
			// Every line of a reply repeats the reply's usage, the
			// output count growing as it streams: take the largest.
			m.Usage.InputTokens = max(m.Usage.InputTokens, u.InputTokens)
			m.Usage.OutputTokens = max(m.Usage.OutputTokens, u.OutputTokens)
			m.Usage.CacheReadTokens = max(m.Usage.CacheReadTokens, u.CacheReadInputTokens)
			m.Usage.CacheWriteTokens = max(m.Usage.CacheWriteTokens, u.CacheCreationInputTokens)
		}
		for i, bl := range r.blocks {
			b.assistantBlock(m, key, r, i, bl)
		}
		if r.IsAPIErrorMessage && m.Error == nil {
			m.Error = &loom.MessageError{Message: clip(r.text(), 2000), Type: "api_error"}
		}
	}
	if synthetic && m.Model == "" {
		// Claude Code wrote this message itself (an API error, an
		// interruption): no model answered.
		m.Provider, m.Usage.APICalls = "", 0
	}
	if len(m.Parts) == 0 && m.Error == nil {
		return nil // its blocks are counted
	}
	return []*loom.Message{m}
}

func (b *builder) assistantBlock(m *loom.Message, key string, r *record, i int, bl block) {
	id := partID(r, i)
	switch bl.Type {
	case "text":
		if strings.TrimSpace(bl.Text) == "" {
			b.res.Skip("text:blank")
			return
		}
		m.Parts = append(m.Parts, loom.Part{ID: id, Type: loom.PartText, Text: bl.Text})
	case "thinking":
		if bl.Thinking == "" {
			b.res.Skip("thinking:empty")
			return
		}
		p := loom.Part{ID: id, Type: loom.PartReasoning, Text: bl.Thinking}
		if bl.Signature != "" {
			p.Metadata = metadata("signature", bl.Signature)
		}
		m.Parts = append(m.Parts, p)
	case "redacted_thinking":
		// Kept as loom's Anthropic provider keeps it, so that a resumed
		// conversation can send it back.
		m.Parts = append(m.Parts, loom.Part{ID: id, Type: loom.PartReasoning, Metadata: metadata("redacted_data", bl.Data)})
	case "tool_use", "server_tool_use", "mcp_tool_use":
		b.tool(m, key, r, i, bl)
	case "image", "document":
		if p, ok := filePart(id, bl); ok {
			m.Parts = append(m.Parts, p)
		} else {
			b.res.Skip(bl.Type + ":empty")
		}
	default:
		if isResultBlock(bl) {
			return // taken by its call
		}
		b.res.Skip("unknown:block:" + label(bl.Type))
	}
}

// tool makes the tool part of a call with its result, and the agent part
// of the sub-agent it ran.
func (b *builder) tool(m *loom.Message, key string, r *record, i int, bl block) {
	start := r.ts
	p := loom.Part{
		ID:        partID(r, i),
		Type:      loom.PartTool,
		CallID:    bl.ID,
		Name:      bl.Name,
		Input:     inputObject(bl.Input),
		StartedAt: &start,
	}
	if p.CallID == "" {
		b.res.Problemf(r.file, r.n, "tool call without an id")
		p.CallID = p.ID
	}
	if p.Name == "" {
		b.res.Problemf(r.file, r.n, "tool call "+p.CallID+" without a name")
		p.Name = "unknown"
	}
	var files []loom.Part
	if res, ok := b.results[bl.ID]; ok && bl.ID != "" {
		res.used = true
		rb := res.rec.blocks[res.idx]
		end := res.rec.ts
		p.EndedAt = &end
		text, images := resultContent(rb.Content)
		if rb.IsError {
			p.Status, p.Error = loom.ToolError, text
			if p.Error == "" {
				p.Error = "the tool failed"
			}
		} else {
			p.Status = loom.ToolCompleted
			p.Output, _ = json.Marshal(text)
		}
		if res.rec.Type == "user" {
			p.Metadata = toolMetadata(res.rec.ToolUseResult)
		}
		for k, img := range images {
			if f, ok := filePart(partID(res.rec, res.idx)+"/"+strconv.Itoa(k), img); ok {
				files = append(files, f)
			}
		}
	} else if b.live[key] {
		p.Status = loom.ToolRunning
	} else {
		// The conversation went on without the call's result: it was
		// interrupted.
		p.Status, p.Error = loom.ToolError, loom.Interrupted
	}
	m.Parts = append(m.Parts, p)
	m.Parts = append(m.Parts, files...)
	if a, ok := b.agents[bl.ID]; ok && bl.ID != "" {
		m.Parts = append(m.Parts, loom.Part{ID: p.ID + "/agent", Type: loom.PartAgent, Name: a.name, SessionID: a.sourceID})
	}
}

// user makes the messages of a user line: what the user typed is a user
// message; what Claude Code put there (isMeta lines, system reminders,
// command output, caveats, interruption markers, task notifications) is a
// system message. A line holding both gives a system message
// (<uuid>/context) before the user message (<uuid>).
func (b *builder) user(r *record) []*loom.Message {
	if r.stringContent || len(r.blocks) == 1 {
		if cmd, ok := command(r.blocks[0].Text); ok && r.blocks[0].Type == "text" && !r.IsMeta {
			b.commands[r.id] = markCommand
			return []*loom.Message{{
				ID: r.id, Role: loom.RoleUser, CreatedAt: r.ts,
				Parts: []loom.Part{{ID: partID(r, 0), Type: loom.PartText, Text: cmd}},
			}}
		}
	}
	var typed, injected []loom.Part
	for i, bl := range r.blocks {
		id := partID(r, i)
		var p loom.Part
		switch bl.Type {
		case "text":
			if strings.TrimSpace(bl.Text) == "" {
				b.res.Skip("text:blank")
				continue
			}
			p = loom.Part{ID: id, Type: loom.PartText, Text: bl.Text}
			if injectedText := isInjected(bl.Text); r.IsMeta || injectedText {
				if r.IsMeta && !injectedText {
					b.commands[r.id] = markExpansion
				}
				injected = append(injected, p)
				continue
			}
		case "image", "document":
			var ok bool
			if p, ok = filePart(id, bl); !ok {
				b.res.Skip(bl.Type + ":empty")
				continue
			}
			if r.IsMeta {
				injected = append(injected, p)
				continue
			}
		default:
			if !isResultBlock(bl) {
				b.res.Skip("unknown:block:" + label(bl.Type))
			}
			continue
		}
		typed = append(typed, p)
	}
	var out []*loom.Message
	if len(injected) > 0 {
		id := r.id
		if len(typed) > 0 {
			id += "/context"
		}
		out = append(out, &loom.Message{ID: id, Role: loom.RoleSystem, CreatedAt: r.ts, Parts: injected})
	}
	if len(typed) > 0 {
		out = append(out, &loom.Message{ID: r.id, Role: loom.RoleUser, CreatedAt: r.ts, Parts: typed})
	}
	return out
}

// compaction makes one summary message of a compact_boundary line and the
// summary that follows it.
func (b *builder) compaction(recs []*record) []*loom.Message {
	first := recs[0]
	m := &loom.Message{ID: first.id, Role: loom.RoleSummary, CreatedAt: first.ts, Usage: loom.Usage{Compactions: 1}}
	var meta json.RawMessage
	boundaryText := ""
	for _, r := range recs {
		if r.Type == "system" {
			if len(r.CompactMetadata) > 0 && meta == nil {
				meta = r.CompactMetadata
			}
			if boundaryText == "" {
				boundaryText = r.systemText()
			}
			continue
		}
		for i, bl := range r.blocks {
			switch bl.Type {
			case "text":
				if strings.TrimSpace(bl.Text) == "" {
					b.res.Skip("text:blank")
					continue
				}
				m.Parts = append(m.Parts, loom.Part{ID: partID(r, i), Type: loom.PartText, Text: bl.Text})
			default:
				if !isResultBlock(bl) {
					b.res.Skip("unknown:block:" + label(bl.Type))
				}
			}
		}
	}
	if len(m.Parts) == 0 {
		// The boundary without its summary (not written yet, or lost).
		if boundaryText == "" {
			boundaryText = "Conversation compacted"
		}
		m.Parts = append(m.Parts, loom.Part{ID: first.id + "/0", Type: loom.PartText, Text: boundaryText})
	}
	if meta != nil && json.Valid(meta) {
		m.Parts[0].Metadata = meta
	}
	if a, ok := b.agents[first.id]; ok {
		m.Parts = append(m.Parts, loom.Part{ID: first.id + "/agent", Type: loom.PartAgent, Name: a.name, SessionID: a.sourceID})
	}
	return []*loom.Message{m}
}

// system makes the message of a system line kept as one: a local command
// (/model, /mcp …) or its output.
func (b *builder) system(r *record) []*loom.Message {
	text := r.systemText()
	if cmd, ok := command(text); ok {
		text = cmd
	}
	if strings.TrimSpace(text) == "" {
		b.res.Skip("system:" + label(r.Subtype) + ":empty")
		return nil
	}
	return []*loom.Message{{
		ID: r.id, Role: loom.RoleSystem, CreatedAt: r.ts,
		Parts: []loom.Part{{ID: r.id + "/0", Type: loom.PartText, Text: text}},
	}}
}

// Marks of builder.commands.
const (
	markCommand   byte = 'c'
	markExpansion byte = 'e'
)

// settleCommands gives each slash-command message of msgs its role: the
// user's when it was sent to the model (a custom command, /init, /review
// …: an expansion of it or a reply follows before the next prompt),
// system when it only ran in Claude Code (/model, /mcp, /clear …), so that
// a local command is never taken for the last prompt. Claude Code writes
// a command's expansion together with the command, so the role is known
// as soon as the command is.
func settleCommands(msgs []*loom.Message, marks map[string]byte) {
	answered := false
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		switch mark := marks[m.ID]; {
		case mark == markCommand:
			if answered {
				m.Role = loom.RoleUser
			} else {
				m.Role = loom.RoleSystem
			}
			answered = false
		case mark == markExpansion || m.Role == loom.RoleAssistant:
			answered = true
		case m.Role == loom.RoleUser:
			answered = false
		}
	}
}

var (
	commandName = regexp.MustCompile(`(?s)<command-name>(.*?)</command-name>`)
	commandArgs = regexp.MustCompile(`(?s)<command-args>(.*?)</command-args>`)
)

// command reads a slash command's wrapper as what the user typed:
// "/name args".
func command(text string) (string, bool) {
	if !strings.Contains(text, "<command-name>") {
		return "", false
	}
	name := commandName.FindStringSubmatch(text)
	if name == nil {
		return "", false
	}
	cmd := strings.TrimSpace(name[1])
	if cmd != "" && !strings.HasPrefix(cmd, "/") {
		cmd = "/" + cmd
	}
	if args := commandArgs.FindStringSubmatch(text); args != nil {
		if a := strings.TrimSpace(args[1]); a != "" {
			cmd += " " + a
		}
	}
	if cmd == "" {
		return "", false
	}
	return cmd, true
}

// injectedPrefixes open text that Claude Code, an IDE or a hook put into
// a user line; the user did not type it.
var injectedPrefixes = []string{
	"<system-reminder>",
	"<local-command-stdout>",
	"<local-command-stderr>",
	"<local-command-caveat>",
	"Caveat: The messages below were generated by the user while running local commands",
	"<command-message>",
	"<task-notification>",
	"<ide_opened_file>",
	"<ide_selection>",
	"<ide_diagnostics>",
	"<user-prompt-submit-hook>",
	"<bash-stdout>",
	"<bash-stderr>",
	"[Request interrupted by user",
}

func isInjected(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// resultContent reads a tool_result's content: its text (a string, the
// text blocks joined, or the JSON of content that is neither) and its
// images.
func resultContent(raw json.RawMessage) (string, []block) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var items []block
	if raw[0] == '[' && json.Unmarshal(raw, &items) == nil {
		var texts []string
		var images []block
		plain := true
		for _, it := range items {
			switch it.Type {
			case "text":
				texts = append(texts, it.Text)
			case "image", "document":
				images = append(images, it)
			default:
				plain = false
			}
		}
		if plain {
			return strings.Join(texts, "\n"), images
		}
	}
	return string(raw), nil
}

// filePart makes a file part of an image or document block, its bytes as
// a data URL.
func filePart(id string, bl block) (loom.Part, bool) {
	s := bl.Source
	if s == nil {
		return loom.Part{}, false
	}
	p := loom.Part{ID: id, Type: loom.PartFile, Mime: s.MediaType, Filename: bl.Title}
	switch {
	case s.URL != "":
		p.URL = s.URL
	case s.Data != "" && s.Type == "base64":
		p.URL = "data:" + s.MediaType + ";base64," + s.Data
	case s.Data != "":
		p.URL = "data:" + s.MediaType + "," + s.Data
	default:
		return loom.Part{}, false
	}
	if p.Mime == "" {
		p.Mime = "application/octet-stream"
	}
	return p, true
}

// inputObject is a tool call's input as a JSON object: {} when it has
// none, {"input": …} when it is not an object.
func inputObject(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null" || !json.Valid(raw):
		return json.RawMessage("{}")
	case raw[0] != '{':
		b, _ := json.Marshal(map[string]json.RawMessage{"input": raw})
		return b
	}
	return raw
}

// Bounds of the toolUseResult kept in a tool part's metadata: it repeats
// the result in a structured form, at times with a whole file's content,
// so a large one keeps only its small members.
const (
	maxMetadata = 8 << 10
	maxMember   = 1 << 10
)

// toolMetadata keeps Claude Code's toolUseResult (the structured result:
// exit codes, file paths, a sub-agent's id and usage) as
// {"toolUseResult": …}; members too large to keep are named in
// "omitted".
func toolMetadata(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || !json.Valid(raw) {
		return nil
	}
	var out struct {
		ToolUseResult json.RawMessage `json:"toolUseResult"`
		Omitted       []string        `json:"omitted,omitempty"`
	}
	if len(raw) <= maxMetadata {
		out.ToolUseResult = raw
	} else {
		var obj map[string]json.RawMessage
		if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
			return nil // a long text: the output has it
		}
		kept := map[string]json.RawMessage{}
		for k, v := range obj {
			if len(v) <= maxMember {
				kept[k] = v
			} else {
				out.Omitted = append(out.Omitted, k)
			}
		}
		slices.Sort(out.Omitted)
		out.ToolUseResult, _ = json.Marshal(kept)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

func metadata(key, value string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{key: value})
	return b
}

// partID is the id of the part made of block i of line r: stable across
// re-reads, since a line never changes once written.
func partID(r *record, i int) string { return r.id + "/" + strconv.Itoa(i) }

// copyMessages copies msgs for another session (a fork holds the messages
// it shares with its parent), so that the importer may number each
// session's messages on its own.
func copyMessages(msgs []*loom.Message) []*loom.Message {
	out := make([]*loom.Message, len(msgs))
	for i, m := range msgs {
		c := *m
		c.Parts = append([]loom.Part(nil), m.Parts...)
		out[i] = &c
	}
	return out
}

// span is the earliest and latest time of msgs.
func span(msgs []*loom.Message) (first, last time.Time) {
	for _, m := range msgs {
		if first.IsZero() || m.CreatedAt.Before(first) {
			first = m.CreatedAt
		}
		last = later(last, m.CreatedAt)
		if m.CompletedAt != nil {
			last = later(last, *m.CompletedAt)
		}
		for _, p := range m.Parts {
			if p.EndedAt != nil {
				last = later(last, *p.EndedAt)
			}
		}
	}
	return first, last
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
