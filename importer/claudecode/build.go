package claudecode

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

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
	// at is the order of the first record that names the sub-agent (its
	// call's result, a progress line, its first inline line): where
	// its part goes among its reply's parts (assistant).
	at int
}

// latePart is a part of a reply that a later record than the reply's
// own gives it (a sub-agent's part, an image of a tool's result), with
// that record's order.
type latePart struct {
	at int
	p  loom.Part
}

// builder turns the lines of one tree into messages, one key at a time.
type builder struct {
	res     *importer.Result
	t       *tree
	results map[string]*result
	// agents links tool calls (by call id) and compactions (by the
	// compact_boundary's id) to the sub-agent sessions they ran.
	agents map[string]agentLink
	// late are the parts of the reply being built that later records
	// give it (tool).
	late []latePart
	// live is the key of the main chain's last message: a call there
	// without a result is still running; elsewhere it was interrupted.
	live  map[string]bool
	built map[string][]*loom.Message
	// commands marks the ids of slash-command messages, whose role
	// depends on what follows them, and of the prompts commands expand
	// to (see settleCommands).
	commands map[string]byte
	// cwd is the directory the transcript started in, the session's:
	// a call made after a cd records its own (toolDir).
	cwd string
	// systemPrompt is the text of the last prompt_snapshot kept.
	systemPrompt string
	// attached are the ids of the messages made of instructions
	// attachments, which readers before them did not make
	// (importer.Session.Added).
	attached map[string]bool
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
		if b.cwd == "" {
			b.cwd = r.Cwd
		}
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
		Provider:    Provider,
		CreatedAt:   first.ts,
		CompletedAt: &done,
		Usage:       loom.Usage{APICalls: 1},
	}
	synthetic := false
	// The parts in the order of the records that give them, so that a
	// reading stopped at any line holds the parts of the whole
	// reading's first, in its order: parallel calls' sub-agents and
	// results come after every call of the reply.
	var parts []latePart
	b.late = b.late[:0]
	for _, r := range recs {
		msg := r.Message
		if msg.Model == "<synthetic>" {
			synthetic = true
		} else if msg.Model != "" {
			m.Model = msg.Model
		}
		if m.Call == "" && msg.ID != "" {
			// The call, as ccusage tells one from another: the
			// reply's id and the request's.
			m.Call = "claude-code:" + msg.ID + ":" + r.RequestID
		}
		if u := msg.Usage; u != nil {
			// Every line of a reply repeats the reply's usage, the
			// output count growing as it streams: take the largest.
			m.Usage.InputTokens = max(m.Usage.InputTokens, u.InputTokens)
			m.Usage.OutputTokens = max(m.Usage.OutputTokens, u.OutputTokens)
			m.Usage.CacheReadTokens = max(m.Usage.CacheReadTokens, u.CacheReadInputTokens)
			m.Usage.CacheWriteTokens = max(m.Usage.CacheWriteTokens, u.CacheCreationInputTokens)
			if c := u.CacheCreation; c != nil {
				m.Usage.CacheWrite1hTokens = max(m.Usage.CacheWrite1hTokens, min(c.Ephemeral1h, u.CacheCreationInputTokens))
			}
		}
		from := len(m.Parts)
		for i, bl := range r.blocks {
			b.assistantBlock(m, key, r, i, bl)
		}
		for _, p := range m.Parts[from:] {
			parts = append(parts, latePart{r.order, p})
		}
		if r.IsAPIErrorMessage && m.Error == nil {
			m.Error = &loom.MessageError{Message: importer.Clip(r.text(), 2000), Type: "api_error"}
		}
	}
	if len(b.late) > 0 {
		parts = append(parts, b.late...)
		slices.SortStableFunc(parts, func(a, b latePart) int { return a.at - b.at })
		m.Parts = m.Parts[:0]
		for _, lp := range parts {
			m.Parts = append(m.Parts, lp.p)
		}
	}
	if synthetic && m.Model == "" {
		// Claude Code wrote this message itself (an API error, an
		// interruption): no model answered.
		m.Provider, m.Usage.APICalls, m.Call = "", 0, ""
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

// compaction makes one summary message of a compact_boundary line and the
// summary that follows it.
func (b *builder) compaction(recs []*record) []*loom.Message {
	first := recs[0]
	m := &loom.Message{ID: first.id, Role: loom.RoleSummary, CreatedAt: first.ts, Usage: loom.Usage{Compactions: 1}}
	if first.compactUsage != nil {
		m.Usage.Add(*first.compactUsage)
		m.Model, m.Provider = first.compactModel, Provider
	}
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
	if len(m.Parts) == 0 && recs[len(recs)-1] == b.t.recs[len(b.t.recs)-1] {
		// The boundary is the reading's last line: Claude Code writes
		// the summary right after it. The message waits for it, so that
		// its parts are the whole file's reading's.
		return nil
	}
	if len(m.Parts) == 0 {
		// The boundary without its summary (lost).
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
	if r.Type == "attachment" {
		text = attachmentText(r)
		if r.Attachment.Type == "prompt_snapshot" {
			// Claude Code writes its system prompt before each request:
			// kept once, and again only when it changed.
			if text == b.systemPrompt {
				b.res.Skip("attachment:prompt_snapshot:same")
				return nil
			}
			b.systemPrompt = text
		}
		if b.attached == nil {
			b.attached = map[string]bool{}
		}
		b.attached[r.id] = true
	} else if cmd, ok := command(text); ok {
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
