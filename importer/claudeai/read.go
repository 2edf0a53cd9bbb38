package claudeai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// conversation is one element of conversations.json.
type conversation struct {
	UUID         string     `json:"uuid"`
	Name         string     `json:"name"`
	Model        string     `json:"model"`
	CreatedAt    stamp      `json:"created_at"`
	UpdatedAt    stamp      `json:"updated_at"`
	CurrentLeaf  string     `json:"current_leaf_message_uuid"`
	ChatMessages *[]message `json:"chat_messages"`
	// Mapping is ChatGPT's: a file of its export is not Claude.ai's.
	Mapping json.RawMessage `json:"mapping"`
}

type message struct {
	UUID        string  `json:"uuid"`
	Text        string  `json:"text"`
	Content     []block `json:"content"`
	Sender      string  `json:"sender"`
	CreatedAt   stamp   `json:"created_at"`
	UpdatedAt   stamp   `json:"updated_at"`
	Parent      string  `json:"parent_message_uuid"`
	Attachments []struct {
		FileName         string `json:"file_name"`
		FileType         string `json:"file_type"`
		ExtractedContent string `json:"extracted_content"`
	} `json:"attachments"`
	Files []struct {
		FileName string `json:"file_name"`
		UUID     string `json:"file_uuid"`
	} `json:"files"`
}

// block is one item of a message's content: a content block of
// Anthropic's form, with the times Claude.ai stamps it with.
type block struct {
	importer.ContentBlock
	Start stamp `json:"start_timestamp"`
	Stop  stamp `json:"stop_timestamp"`
}

// stamp is a time Claude.ai writes in RFC 3339, null or absent when it
// has none.
type stamp struct{ t time.Time }

func (s *stamp) UnmarshalJSON(b []byte) error {
	var v string
	if json.Unmarshal(b, &v) == nil {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			s.t = t
		}
	}
	return nil
}

// rootParent is the parent Claude.ai gives a conversation's first
// message.
const rootParent = "00000000-0000-4000-8000-000000000000"

// readConversation reads conversation i of the export at path into res.
func readConversation(path string, i int, elem []byte, res *importer.Result) error {
	var c conversation
	if !importer.DecodeConversation(path, i, elem, &c, res) {
		return nil
	}
	if c.ChatMessages == nil {
		if len(c.Mapping) > 0 {
			return importer.NotThisExport("a ChatGPT export, not Claude.ai's: import it with --from chatgpt")
		}
		res.Problemf(path, 0, fmt.Sprintf("conversation %d has no chat_messages", i+1))
		return nil
	}
	id := strings.TrimSpace(c.UUID)
	if id == "" || strings.ContainsAny(id, "\r\n") {
		res.Problemf(path, 0, fmt.Sprintf("conversation %d has no uuid", i+1))
		return nil
	}
	s := &importer.Session{
		SourceID: id, Kind: loom.KindMain, Title: c.Name, Path: path, Provider: Provider, Model: c.Model,
		CreatedAt: c.CreatedAt.t, UpdatedAt: c.UpdatedAt.t,
	}
	main, branches := paths(&c)
	s.Messages = convert(s, main, res)
	if !importer.AddConversation(res, s) {
		return nil
	}
	onMain := map[*message]bool{}
	for _, m := range main {
		onMain[m] = true
	}
	mainIDs := map[string]bool{}
	for _, m := range s.Messages {
		mainIDs[m.ID] = true
	}
	for k, b := range branches {
		shared := 0
		for shared < len(b) && onMain[b[shared]] {
			shared++
		}
		if k >= maxForks {
			for range b[shared:] {
				res.Skip("branch")
			}
			continue
		}
		msgs := convert(s, b, nil)
		for _, m := range msgs {
			if !mainIDs[m.ID] {
				res.Sessions = append(res.Sessions, importer.BranchOf(s, m.ID, msgs, mainIDs))
				break
			}
		}
	}
	return nil
}

// maxForks bounds the abandoned branches of one conversation made
// forks; the messages of the others are counted as skipped.
const maxForks = 100

// convert turns msgs into loom's messages of s; skips are counted in
// res, unless it is nil (a fork's copy of what s holds).
func convert(s *importer.Session, msgs []*message, res *importer.Result) []*loom.Message {
	cv := &converter{s: s, res: res, now: s.CreatedAt, used: map[string]bool{}}
	for _, m := range msgs {
		cv.message(m)
	}
	return cv.out
}

// paths are the conversation's messages in order, and its abandoned
// branches. An export whose messages name their parents
// (parent_message_uuid) and branch (a prompt edited, a reply retried)
// is the chain that ends at current_leaf_message_uuid (else the last
// message); each other leaf's chain, from the first message, is a
// branch.
func paths(c *conversation) (main []*message, branches [][]*message) {
	msgs := *c.ChatMessages
	byID := map[string]*message{}
	children := map[string]int{}
	for i := range msgs {
		m := &msgs[i]
		if m.UUID != "" && byID[m.UUID] == nil {
			byID[m.UUID] = m
		}
		if m.Parent != "" {
			children[m.Parent]++
		}
	}
	branched := false
	for _, n := range children {
		if n > 1 {
			branched = true
		}
	}
	if !branched || len(msgs) == 0 {
		for i := range msgs {
			main = append(main, &msgs[i])
		}
		return main, nil
	}
	leaf := byID[c.CurrentLeaf]
	if leaf == nil {
		leaf = &msgs[len(msgs)-1]
	}
	main = chain(byID, leaf)
	on := map[*message]bool{}
	for _, m := range main {
		on[m] = true
	}
	for i := range msgs {
		m := &msgs[i]
		if on[m] || children[m.UUID] > 0 || byID[m.UUID] != m {
			continue
		}
		branches = append(branches, chain(byID, m))
	}
	return main, branches
}

// chain is the messages from the first to m, following parents (a loop
// or a missing parent ends it).
func chain(byID map[string]*message, m *message) []*message {
	var out []*message
	seen := map[*message]bool{}
	for ; m != nil && !seen[m]; m = byID[m.Parent] {
		seen[m] = true
		out = append(out, m)
		if m.Parent == "" || m.Parent == rootParent {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// converter turns a conversation's messages into loom's.
type converter struct {
	s    *importer.Session
	res  *importer.Result // nil: skips are not counted
	out  []*loom.Message
	now  time.Time
	used map[string]bool
	// calls are the tool parts of the current reply waiting for their
	// results, by tool_use id (and by name, for results without one).
	msg   *loom.Message
	calls map[string]int
}

// message converts one message of the conversation.
func (cv *converter) message(m *message) {
	if !m.CreatedAt.t.IsZero() {
		cv.now = m.CreatedAt.t
	}
	role := loom.RoleUser
	switch m.Sender {
	case "human", "user":
	case "assistant":
		role = loom.RoleAssistant
	case "system":
		role = loom.RoleSystem
	default:
		cv.res.Skip("unknown:sender:" + importer.TypeName(m.Sender))
		return
	}
	id := strings.TrimSpace(m.UUID)
	if id == "" || strings.ContainsAny(id, "\r\n") || cv.used[id] {
		id = cv.s.SourceID + ":" + strconv.Itoa(len(cv.out)+1)
	}
	cv.used[id] = true
	t := cv.now
	end := t
	if m.UpdatedAt.t.After(end) {
		end = m.UpdatedAt.t
	}
	msg := &loom.Message{ID: id, Role: role, CreatedAt: t, CompletedAt: &end}
	if role == loom.RoleAssistant {
		msg.Provider, msg.Model = Provider, cv.s.Model
	}
	cv.msg, cv.calls = msg, map[string]int{}
	texts := false
	for _, b := range m.Content {
		texts = cv.block(b) || texts
	}
	if !texts && strings.TrimSpace(m.Text) != "" {
		// Older exports have the text alone, without content.
		cv.part(loom.Part{Type: loom.PartText, Text: m.Text})
	}
	for _, a := range m.Attachments {
		p := loom.Part{Type: loom.PartFile, Filename: a.FileName, Mime: a.FileType}
		if a.ExtractedContent != "" {
			p.Source = &loom.FileSource{Type: "file", Path: a.FileName, Text: a.ExtractedContent}
		}
		cv.part(p)
	}
	for _, f := range m.Files {
		cv.part(loom.Part{Type: loom.PartFile, Filename: f.FileName})
	}
	if len(msg.Parts) == 0 {
		cv.res.Skip("empty:" + m.Sender)
		return
	}
	cv.out = append(cv.out, msg)
}

func (cv *converter) part(p loom.Part) int { return importer.AddPart(cv.msg, p) }

// block converts one content block, and reports whether it was text.
func (cv *converter) block(b block) bool {
	switch b.Type {
	case "text":
		if strings.TrimSpace(b.Text) == "" {
			return false
		}
		cv.part(loom.Part{Type: loom.PartText, Text: b.Text})
		return true
	case "thinking":
		if strings.TrimSpace(b.Thinking) != "" {
			cv.part(loom.Part{Type: loom.PartReasoning, Text: b.Thinking})
		}
	case "tool_use":
		var input []byte
		var buf bytes.Buffer
		if bytes.HasPrefix(bytes.TrimSpace(b.Input), []byte("{")) && json.Compact(&buf, b.Input) == nil {
			input = buf.Bytes()
		} else {
			input, _ = json.Marshal(map[string]json.RawMessage{"input": orNull(bytes.TrimSpace(b.Input))})
		}
		name := b.Name
		if name == "" {
			name = "tool"
		}
		p := loom.Part{Type: loom.PartTool, Name: name, Status: loom.ToolRunning, Input: input, StartedAt: when(b.Start, cv.now)}
		p.CallID = strings.TrimSpace(b.ID)
		if p.CallID == "" || strings.ContainsAny(p.CallID, "\r\n") {
			p.CallID = cv.msg.ID + "/" + strconv.Itoa(len(cv.msg.Parts))
		}
		i := cv.part(p)
		cv.calls[p.CallID], cv.calls["name:"+name] = i, i
	case "tool_result":
		cv.result(b)
	default:
		cv.res.Skip("content:" + importer.TypeName(b.Type))
	}
	return false
}

// result completes the call a tool_result answers, or adds it as a
// call of its own when none waits for it.
func (cv *converter) result(b block) {
	i, ok := cv.calls[strings.TrimSpace(b.ToolUseID)]
	if !ok || b.ToolUseID == "" {
		i, ok = cv.calls["name:"+b.Name]
	}
	if !ok {
		name := b.Name
		if name == "" {
			name = "tool"
		}
		i = cv.part(loom.Part{Type: loom.PartTool, CallID: cv.msg.ID + "/" + strconv.Itoa(len(cv.msg.Parts)), Name: name, Input: json.RawMessage("{}"), StartedAt: when(b.Start, cv.now)})
	}
	p := &cv.msg.Parts[i]
	if p.Status == loom.ToolCompleted || p.Status == loom.ToolError {
		return // answered already
	}
	out, _ := json.Marshal(resultText(b.Content))
	p.Output, p.EndedAt, p.Status = out, when(b.Stop, cv.now), loom.ToolCompleted
	if b.IsError {
		p.Status, p.Error = loom.ToolError, loom.Truncate(resultText(b.Content), 200)
	}
	if p.EndedAt.Before(*p.StartedAt) {
		p.EndedAt = p.StartedAt
	}
}

// resultText is the text of a tool result's content: a string, or
// blocks whose text parts are joined.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return string(bytes.TrimSpace(raw))
	}
	var out []string
	for _, b := range blocks {
		if b.Text != "" {
			out = append(out, b.Text)
		}
	}
	return strings.Join(out, "\n")
}

func orNull(b []byte) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return json.RawMessage("null")
	}
	return b
}

func when(s stamp, def time.Time) *time.Time {
	t := s.t
	if t.IsZero() {
		t = def
	}
	return &t
}
