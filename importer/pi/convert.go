package pi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// call is a tool part waiting for its result on the path being built.
type call struct {
	msg *loom.Message
	idx int
}

// messages builds the messages of the entries along path, each tool
// call folded with its result. live says whether the path is the one pi
// goes on from: a call without a result there may still be running.
func (rd *reader) messages(path []int, live bool) []*loom.Message {
	var out []*loom.Message
	calls := map[string]call{}
	ids := map[string]bool{}
	count := live // count what is skipped once, on the main path
	skip := func(t string) {
		if count {
			rd.res.Skip(t)
		}
	}
	for _, i := range path {
		nd := rd.nodes[i]
		var m *loom.Message
		switch nd.e.Type {
		case "message":
			m = rd.message(nd, calls, skip)
		case "compaction":
			m = rd.textMessage(nd, loom.RoleSummary, nd.e.Summary)
			if m != nil {
				m.Usage.Compactions = 1
				m.Parts[0].Metadata = compactionMeta(nd.e)
			}
		case "branch_summary":
			// The summary of the branch pi left when it moved here
			// (/tree): context the user did not type.
			m = rd.textMessage(nd, loom.RoleSystem, nd.e.Summary)
			if m != nil {
				m.Parts[0].Metadata, _ = json.Marshal(map[string]string{"branchSummaryFrom": nd.e.FromID})
			}
		case "custom_message":
			m = rd.contentMessage(nd, loom.RoleSystem, nd.e.Content, skip)
			if m != nil && nd.e.CustomType != "" {
				m.Parts[0].Metadata, _ = json.Marshal(map[string]string{"customType": nd.e.CustomType})
			}
		}
		if m == nil {
			continue
		}
		if ids[m.ID] {
			// A damaged file repeats an id: the later entry is named by
			// its line.
			m.ID += "#" + strconv.Itoa(nd.n)
			for k := range m.Parts {
				m.Parts[k].ID = m.ID + "/" + strconv.Itoa(k)
			}
		}
		ids[m.ID] = true
		out = append(out, m)
	}
	tail := lastAssistant(out)
	for _, c := range calls {
		p := &c.msg.Parts[c.idx]
		if live && c.msg == tail {
			p.Status, p.Error = loom.ToolError, importer.NoResult
		} else {
			p.Status, p.Error = loom.ToolError, loom.Interrupted
		}
	}
	return out
}

func lastAssistant(msgs []*loom.Message) *loom.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == loom.RoleAssistant {
			return msgs[i]
		}
	}
	return nil
}

// times are a message's creation (the message's own time, else its
// entry's) and completion (its entry's, when pi wrote it).
func times(nd *node) (time.Time, *time.Time) {
	created := nd.ts
	if nd.msg != nil {
		if t := msTime(nd.msg.Timestamp); !t.IsZero() {
			created = t
		}
	}
	if created.IsZero() {
		created = nd.ts
	}
	done := nd.ts
	if done.Before(created) {
		done = created
	}
	return created, &done
}

// message converts one message entry; a toolResult completes its call
// and makes no message.
func (rd *reader) message(nd *node, calls map[string]call, skip func(string)) *loom.Message {
	m := nd.msg
	switch m.Role {
	case "user":
		return rd.contentMessage(nd, loom.RoleUser, m.Content, skip)
	case "assistant":
		return rd.assistant(nd, calls, skip)
	case "toolResult":
		c, ok := calls[m.ToolCallID]
		if !ok || m.ToolCallID == "" {
			skip("toolResult:unmatched")
			return nil
		}
		delete(calls, m.ToolCallID)
		rd.result(&c.msg.Parts[c.idx], nd, skip)
		return nil
	case "bashExecution":
		// A command the user ran with ! in pi, and its output.
		var b strings.Builder
		b.WriteString("$ " + m.Command + "\n" + m.Output)
		if m.ExitCode != nil && m.ExitCode.String() != "0" {
			b.WriteString("\n(exit code " + m.ExitCode.String() + ")")
		}
		if m.Cancelled {
			b.WriteString("\n(cancelled)")
		}
		return rd.textMessage(nd, loom.RoleSystem, b.String())
	case "custom", "hookMessage":
		return rd.contentMessage(nd, loom.RoleSystem, m.Content, skip)
	case "branchSummary":
		return rd.textMessage(nd, loom.RoleSystem, m.Summary)
	case "compactionSummary":
		out := rd.textMessage(nd, loom.RoleSummary, m.Summary)
		if out != nil {
			out.Usage.Compactions = 1
		}
		return out
	default:
		skip("role:" + importer.TypeName(m.Role))
		return nil
	}
}

// textMessage is a message of one text part; nil, counted as skipped,
// when the text is blank.
func (rd *reader) textMessage(nd *node, role, text string) *loom.Message {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	created, done := times(nd)
	return &loom.Message{
		ID: nd.id, Role: role, CreatedAt: created, CompletedAt: done,
		Parts: []loom.Part{{ID: nd.id + "/0", Type: loom.PartText, Text: text}},
	}
}

// contentMessage is a message of content that is a string or text and
// image blocks.
func (rd *reader) contentMessage(nd *node, role string, c content, skip func(string)) *loom.Message {
	created, done := times(nd)
	m := &loom.Message{ID: nd.id, Role: role, CreatedAt: created, CompletedAt: done}
	if !rd.addContent(m, nd, c, skip, nil) {
		return nil
	}
	if len(m.Parts) == 0 {
		skip(role + ":empty")
		return nil
	}
	return m
}

// addContent adds the parts of content (a string, or blocks) to m: text
// and images, and the blocks other takes (nil: none); any other block is
// counted as skipped. It reports whether content could be read; when it
// cannot, that is a problem.
func (rd *reader) addContent(m *loom.Message, nd *node, c content, skip func(string), other func(id string, b block) bool) bool {
	text, blocks := c.text, c.blocks
	if c.bad {
		rd.res.Problemf(rd.path, nd.n, "content is neither text nor blocks")
		return false
	}
	if strings.TrimSpace(text) != "" {
		m.Parts = append(m.Parts, loom.Part{ID: nd.id + "/0", Type: loom.PartText, Text: text})
	}
	for i, b := range blocks {
		id := nd.id + "/" + strconv.Itoa(i)
		switch {
		case b.Type == "text":
			if strings.TrimSpace(b.Text) == "" {
				skip("text:blank")
				continue
			}
			m.Parts = append(m.Parts, loom.Part{ID: id, Type: loom.PartText, Text: b.Text})
		case b.Type == "image":
			if p, ok := imagePart(id, b); ok {
				m.Parts = append(m.Parts, p)
			} else {
				skip("image:empty")
			}
		case other == nil || !other(id, b):
			skip("block:" + importer.TypeName(b.Type))
		}
	}
	return true
}

// assistant converts a reply: text, thinking and tool calls, its model,
// provider, usage and cost, and why it stopped when it failed.
func (rd *reader) assistant(nd *node, calls map[string]call, skip func(string)) *loom.Message {
	msg := nd.msg
	created, done := times(nd)
	m := &loom.Message{
		ID: nd.id, Role: loom.RoleAssistant, CreatedAt: created, CompletedAt: done,
		Model: msg.Model, Provider: msg.Provider, Usage: loom.Usage{APICalls: 1},
	}
	if u := msg.Usage; u != nil {
		m.Usage.InputTokens = max(u.Input, 0)
		m.Usage.OutputTokens = max(u.Output, 0)
		m.Usage.CacheReadTokens = max(u.CacheRead, 0)
		m.Usage.CacheWriteTokens = max(u.CacheWrite, 0)
		m.Usage.ReasoningTokens = max(u.Reasoning, 0)
		if u.Cost != nil && u.Cost.Total > 0 && u.Cost.Total < 1e9 {
			m.Usage.CostUSD = u.Cost.Total
		}
	}
	if msg.StopReason == "error" || msg.StopReason == "aborted" {
		text := msg.ErrorMessage
		if text == "" {
			text = "the reply stopped: " + msg.StopReason
		}
		m.Error = &loom.MessageError{Message: importer.Clip(text, 2000), Type: msg.StopReason}
	}
	rd.addContent(m, nd, msg.Content, skip, func(id string, b block) bool {
		switch b.Type {
		case "thinking":
			p := loom.Part{ID: id, Type: loom.PartReasoning, Text: b.Thinking}
			switch {
			case b.Redacted:
				p.Text = ""
				p.Metadata = metadata("redacted_data", b.ThinkingSignature)
			case b.ThinkingSignature != "":
				p.Metadata = metadata("signature", b.ThinkingSignature)
			}
			if p.Text == "" && p.Metadata == nil {
				skip("thinking:empty")
				return true
			}
			m.Parts = append(m.Parts, p)
		case "toolCall":
			rd.toolCall(m, nd, id, b, calls)
		default:
			return false
		}
		return true
	})
	if len(m.Parts) == 0 && m.Error == nil {
		skip("assistant:empty")
		return nil
	}
	return m
}

// toolCall adds the tool part of a call to m, to be completed by its
// result.
func (rd *reader) toolCall(m *loom.Message, nd *node, id string, b block, calls map[string]call) {
	start := m.CreatedAt
	p := loom.Part{ID: id, Type: loom.PartTool, CallID: b.ID, Name: b.Name,
		Input: inputObject(b.Arguments), StartedAt: &start}
	if p.CallID == "" {
		rd.res.Problemf(rd.path, nd.n, "tool call without an id")
		p.CallID = id
	}
	if p.Name == "" {
		rd.res.Problemf(rd.path, nd.n, "tool call "+importer.Clip(p.CallID, 64)+" without a name")
		p.Name = "unknown"
	}
	m.Parts = append(m.Parts, p)
	if old, ok := calls[p.CallID]; ok {
		// A second call with the id: the first gets no result.
		q := &old.msg.Parts[old.idx]
		q.Status, q.Error = loom.ToolError, loom.Interrupted
	}
	calls[p.CallID] = call{msg: m, idx: len(m.Parts) - 1}
}

// result completes a tool part with a toolResult entry.
func (rd *reader) result(p *loom.Part, nd *node, skip func(string)) {
	msg := nd.msg
	end := nd.ts
	if end.IsZero() {
		end = msTime(msg.Timestamp)
	}
	if p.StartedAt != nil && end.Before(*p.StartedAt) {
		end = *p.StartedAt
	}
	p.EndedAt = &end
	text, blocks := msg.Content.text, msg.Content.blocks
	if msg.Content.bad {
		rd.res.Problemf(rd.path, nd.n, "tool result content is neither text nor blocks")
	}
	var parts []string
	if text != "" {
		parts = append(parts, text)
	}
	images := 0
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			images++
		default:
			skip("block:" + importer.TypeName(b.Type))
		}
	}
	out := strings.Join(parts, "\n")
	if msg.IsError {
		p.Status, p.Error = loom.ToolError, out
		if p.Error == "" {
			p.Error = "the tool failed"
		}
	} else {
		p.Status = loom.ToolCompleted
		p.Output, _ = json.Marshal(out)
	}
	meta := map[string]any{}
	if d := bytes.TrimSpace(msg.Details); len(d) > 0 && string(d) != "null" && len(d) <= maxMetadata && json.Valid(d) {
		meta["details"] = json.RawMessage(d)
	}
	if images > 0 {
		meta["images"] = images
	}
	if len(meta) > 0 {
		p.Metadata, _ = json.Marshal(meta)
	}
}

// maxMetadata bounds the details of a tool result kept in its part's
// metadata (pi's structured result: a diff, a truncation notice).
const maxMetadata = 8 << 10

// content is a message's content: a string, or an array of blocks; bad
// when it is neither (absent content is empty). It is decoded with its
// entry, in one pass when its blocks are well formed.
type content struct {
	text   string
	blocks []block
	bad    bool
}

func (c *content) UnmarshalJSON(raw []byte) error {
	*c = content{}
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"':
		return json.Unmarshal(raw, &c.text)
	case raw[0] == '[':
		if json.Unmarshal(raw, &c.blocks) == nil {
			return nil
		}
		// A block of another shape: each is read alone, and one that
		// cannot be is counted as skipped, not the whole content.
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return err
		}
		c.blocks = make([]block, len(items))
		for i, it := range items {
			if json.Unmarshal(it, &c.blocks[i]) != nil {
				c.blocks[i] = block{Type: "malformed"}
			}
		}
	default:
		c.bad = true
	}
	return nil
}

// imagePart is an image block as a file part holding its data.
func imagePart(id string, b block) (loom.Part, bool) {
	if b.Data == "" {
		return loom.Part{}, false
	}
	mime := b.MimeType
	if mime == "" {
		mime = "application/octet-stream"
	}
	return loom.Part{ID: id, Type: loom.PartFile, Mime: mime, URL: "data:" + mime + ";base64," + b.Data}, true
}

// inputObject is a tool call's arguments as a JSON object: absent ones
// are {}, anything else not an object is kept under "input".
func inputObject(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	if raw[0] == '{' && json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"input": raw})
	return b
}

func metadata(key, value string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{key: value})
	return b
}

// compactionMeta keeps what a compaction entry says besides its summary.
func compactionMeta(e entry) json.RawMessage {
	meta := map[string]any{}
	if e.FirstKeptEntryID != "" {
		meta["firstKeptEntryId"] = e.FirstKeptEntryID
	}
	if e.TokensBefore != "" {
		meta["tokensBefore"] = e.TokensBefore
	}
	if d := bytes.TrimSpace(e.Details); len(d) > 0 && string(d) != "null" && len(d) <= maxMetadata && json.Valid(d) {
		meta["details"] = json.RawMessage(d)
	}
	if e.FromHook {
		meta["fromHook"] = true
	}
	if len(meta) == 0 {
		return nil
	}
	b, _ := json.Marshal(meta)
	return b
}
