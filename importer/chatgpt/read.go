package chatgpt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// conversation is one element of conversations.json.
type conversation struct {
	ID             string           `json:"id"`
	ConversationID string           `json:"conversation_id"`
	Title          string           `json:"title"`
	CreateTime     stamp            `json:"create_time"`
	UpdateTime     stamp            `json:"update_time"`
	Mapping        map[string]*node `json:"mapping"`
	CurrentNode    string           `json:"current_node"`
	DefaultModel   string           `json:"default_model_slug"`
	// ChatMessages is Claude.ai's: a file of its export is not ChatGPT's.
	ChatMessages json.RawMessage `json:"chat_messages"`
}

type node struct {
	ID       string   `json:"id"`
	Message  *message `json:"message"`
	Parent   string   `json:"parent"`
	Children []string `json:"children"`
}

type message struct {
	ID     string `json:"id"`
	Author struct {
		Role string `json:"role"`
		Name string `json:"name"`
	} `json:"author"`
	CreateTime stamp    `json:"create_time"`
	Content    content  `json:"content"`
	Recipient  string   `json:"recipient"`
	Weight     *float64 `json:"weight"`
	Metadata   struct {
		ModelSlug   string `json:"model_slug"`
		Hidden      bool   `json:"is_visually_hidden_from_conversation"`
		Attachments []struct {
			ID       string `json:"id"`
			Name     string `json:"name"`
			MimeType string `json:"mime_type"`
		} `json:"attachments"`
	} `json:"metadata"`
}

type content struct {
	ContentType string            `json:"content_type"`
	Parts       []json.RawMessage `json:"parts"`
	Text        string            `json:"text"`
	Language    string            `json:"language"`
	Thoughts    []struct {
		Summary string `json:"summary"`
		Content string `json:"content"`
	} `json:"thoughts"`
	Content string `json:"content"` // reasoning_recap
	Result  string `json:"result"`  // tether_browsing_display
	Title   string `json:"title"`   // tether_quote
	URL     string `json:"url"`
	Name    string `json:"name"` // system_error
	// user_editable_context: the custom instructions.
	UserProfile      string `json:"user_profile"`
	UserInstructions string `json:"user_instructions"`
}

// stamp is a time ChatGPT writes as seconds since 1970 (a fraction of
// one too), null when it has none.
type stamp struct{ t time.Time }

func (s *stamp) UnmarshalJSON(b []byte) error {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	var sec float64
	switch x := v.(type) {
	case float64:
		sec = x
	case string:
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			s.t = t
			return nil
		}
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return nil
		}
		sec = f
	default:
		return nil
	}
	if sec > 0 && sec < 1e11 && !math.IsNaN(sec) {
		whole, frac := math.Modf(sec)
		s.t = time.Unix(int64(whole), int64(frac*1e6)*1e3).UTC()
	}
	return nil
}

// maxForks bounds the abandoned branches of one conversation made
// forks; the messages of the others are counted as skipped.
const maxForks = 100

// readConversation reads conversation i of the export at path into res.
func readConversation(path string, i int, elem []byte, res *importer.Result) error {
	var c conversation
	if !importer.DecodeConversation(path, i, elem, &c, res) {
		return nil
	}
	if c.Mapping == nil {
		if len(c.ChatMessages) > 0 {
			return importer.NotThisExport("a Claude.ai export, not ChatGPT's: import it with --from claude-ai")
		}
		res.Problemf(path, 0, fmt.Sprintf("conversation %d has no mapping of messages", i+1))
		return nil
	}
	id := oneLine(c.ConversationID)
	if id == "" {
		id = oneLine(c.ID)
	}
	if id == "" {
		res.Problemf(path, 0, fmt.Sprintf("conversation %d has no id", i+1))
		return nil
	}
	s := &importer.Session{
		SourceID: id, Kind: loom.KindMain, Title: c.Title, Path: path, Provider: Provider,
		CreatedAt: c.CreateTime.t, UpdatedAt: c.UpdateTime.t,
	}
	mainPath := chain(c.Mapping, leaf(&c))
	on := make(map[string]bool, len(mainPath))
	for _, n := range mainPath {
		on[n.key] = true
	}
	s.Messages = convert(s, mainPath, res)
	for _, m := range slices.Backward(s.Messages) {
		if m.Model != "" {
			s.Model = m.Model
			break
		}
	}
	if c.DefaultModel != "" {
		s.Model = c.DefaultModel
	}
	if !importer.AddConversation(res, s) {
		return nil
	}
	forks(s, &c, on, res)
	return nil
}

// forks adds a fork of s for each abandoned branch of its tree (an
// edited prompt, a regenerated reply): the chain from the root to each
// leaf off the main path.
func forks(s *importer.Session, c *conversation, on map[string]bool, res *importer.Result) {
	var leaves []string
	for k, n := range c.Mapping {
		if on[k] || n == nil || hasChild(c.Mapping, n) {
			continue
		}
		leaves = append(leaves, k)
	}
	slices.Sort(leaves)
	// The message a node becomes has the id of its message.
	mainIDs := map[string]bool{}
	for k, n := range c.Mapping {
		if on[k] && n != nil && n.Message != nil {
			mainIDs[k] = true
			if id := oneLine(n.Message.ID); id != "" {
				mainIDs[id] = true
			}
		}
	}
	made := 0
	for _, k := range leaves {
		path := chain(c.Mapping, k)
		shared := 0
		for shared < len(path) && on[path[shared].key] {
			shared++
		}
		own := 0
		for _, n := range path[shared:] {
			if n.Message != nil {
				own++
			}
		}
		if shared == len(path) || own == 0 {
			continue
		}
		if made >= maxForks {
			for range own {
				res.Skip("branch")
			}
			continue
		}
		made++
		branch := convert(s, path, nil)
		res.Sessions = append(res.Sessions, importer.BranchOf(s, oneLine(path[shared].key), branch, mainIDs))
	}
}

func hasChild(m map[string]*node, n *node) bool {
	for _, ch := range n.Children {
		if m[ch] != nil {
			return true
		}
	}
	return false
}

// leaf is the node the conversation's main path ends at: current_node,
// else (older exports) the newest leaf.
func leaf(c *conversation) string {
	if n := c.Mapping[c.CurrentNode]; n != nil {
		return c.CurrentNode
	}
	best, bestT := "", time.Time{}
	for k, n := range c.Mapping {
		if n == nil || hasChild(c.Mapping, n) {
			continue
		}
		var t time.Time
		if n.Message != nil {
			t = n.Message.CreateTime.t
		}
		if best == "" || t.After(bestT) || (t.Equal(bestT) && k > best) {
			best, bestT = k, t
		}
	}
	return best
}

// keyed is a node with its key in the mapping.
type keyed struct {
	key string
	*node
}

// chain is the path from the root to the node keyed k, following
// parents (a loop or a missing parent ends it).
func chain(m map[string]*node, k string) []keyed {
	var out []keyed
	seen := map[string]bool{}
	for k != "" && !seen[k] {
		n := m[k]
		if n == nil {
			break
		}
		seen[k] = true
		out = append(out, keyed{k, n})
		k = n.Parent
	}
	slices.Reverse(out)
	return out
}

// converter turns a path of nodes into loom messages.
type converter struct {
	s    *importer.Session
	res  *importer.Result // nil: a fork's copy, whose skips are counted once
	out  []*loom.Message
	cur  *loom.Message // the assistant message the replies and tools go to
	now  time.Time
	open map[string]int  // the index of each tool call waiting for its result in cur
	used map[string]bool // message ids given
}

func convert(s *importer.Session, path []keyed, res *importer.Result) []*loom.Message {
	cv := &converter{s: s, res: res, now: s.CreatedAt, used: map[string]bool{}}
	for _, n := range path {
		if n.Message != nil {
			cv.node(n.key, n.Message)
		}
	}
	return cv.out
}

// node converts one message.
func (cv *converter) node(key string, m *message) {
	if !m.CreateTime.t.IsZero() {
		cv.now = m.CreateTime.t
	}
	role, ct := m.Author.Role, m.Content.ContentType
	if m.Metadata.Hidden || (m.Weight != nil && *m.Weight == 0) {
		cv.res.Skip("hidden:" + role)
		return
	}
	switch role {
	case "user", "system":
		cv.cur = nil
		r := loom.RoleUser
		if role == "system" || ct == "user_editable_context" {
			r = loom.RoleSystem
		}
		msg := cv.message(key, m, r)
		cv.content(msg, m)
		for _, a := range m.Metadata.Attachments {
			importer.AddPart(msg, loom.Part{Type: loom.PartFile, Filename: a.Name, Mime: a.MimeType, URL: fileURL(a.ID)})
		}
		if len(msg.Parts) == 0 {
			cv.out = cv.out[:len(cv.out)-1]
			cv.res.Skip("empty:" + role)
		}
	case "assistant":
		msg := cv.assistant(key, m)
		if r := m.Recipient; r != "" && r != "all" {
			cv.call(msg, m, r)
			return
		}
		switch ct {
		case "thoughts":
			for _, t := range m.Content.Thoughts {
				text := strings.TrimSpace(strings.TrimSpace(t.Summary) + "\n\n" + strings.TrimSpace(t.Content))
				if text != "" {
					importer.AddPart(msg, loom.Part{Type: loom.PartReasoning, Text: text})
				}
			}
		case "reasoning_recap":
			cv.res.Skip("reasoning_recap")
		case "model_editable_context":
			cv.res.Skip("model_editable_context")
		default:
			cv.content(msg, m)
		}
		cv.drop(msg)
	case "tool":
		msg := cv.assistant(key, m)
		cv.result(msg, m)
		cv.drop(msg)
	default:
		cv.res.Skip("unknown:role:" + importer.TypeName(role))
	}
}

// drop removes msg when it was made for m and got nothing.
func (cv *converter) drop(msg *loom.Message) {
	if len(msg.Parts) == 0 && cv.out[len(cv.out)-1] == msg {
		cv.out = cv.out[:len(cv.out)-1]
		cv.cur = nil
	}
}

// message starts a message of role for node key.
func (cv *converter) message(key string, m *message, role string) *loom.Message {
	id := oneLine(m.ID)
	if id == "" {
		id = oneLine(key)
	}
	if id == "" || cv.used[id] {
		id = fmt.Sprintf("%s:%d", cv.s.SourceID, len(cv.out)+1)
	}
	cv.used[id] = true
	t := cv.now
	msg := &loom.Message{ID: id, Role: role, CreatedAt: t, CompletedAt: &t}
	cv.out = append(cv.out, msg)
	return msg
}

// assistant is the assistant message a reply or a tool's result of
// node key goes to: one model turn's thoughts, calls, results and text
// are one message.
func (cv *converter) assistant(key string, m *message) *loom.Message {
	if cv.cur == nil {
		cv.cur = cv.message(key, m, loom.RoleAssistant)
		cv.cur.Provider = Provider
		cv.open = map[string]int{}
	}
	if m.Metadata.ModelSlug != "" {
		cv.cur.Model = m.Metadata.ModelSlug
	}
	if cv.now.After(*cv.cur.CompletedAt) {
		t := cv.now
		cv.cur.CompletedAt = &t
	}
	return cv.cur
}

// content adds the text, images and code of m to msg.
func (cv *converter) content(msg *loom.Message, m *message) {
	c := &m.Content
	switch c.ContentType {
	case "user_editable_context":
		text := strings.TrimSpace(strings.TrimSpace(c.UserProfile) + "\n\n" + strings.TrimSpace(c.UserInstructions))
		cv.text(msg, text)
		return
	case "code", "execution_output", "system_error":
		cv.text(msg, c.Text)
		return
	case "tether_browsing_display":
		cv.text(msg, c.Result)
		return
	case "tether_quote":
		cv.text(msg, strings.TrimSpace(c.Title+"\n"+c.URL+"\n\n"+c.Text))
		return
	}
	if len(c.Parts) == 0 && c.Text != "" {
		cv.text(msg, c.Text)
		return
	}
	for _, raw := range c.Parts {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			cv.text(msg, s)
			continue
		}
		var obj struct {
			ContentType  string `json:"content_type"`
			AssetPointer string `json:"asset_pointer"`
			Text         string `json:"text"`
		}
		if json.Unmarshal(raw, &obj) != nil {
			cv.res.Skip("part:unknown")
			continue
		}
		switch {
		case obj.AssetPointer != "":
			mime := ""
			if strings.HasPrefix(obj.ContentType, "image") {
				mime = "image/*"
			}
			importer.AddPart(msg, loom.Part{Type: loom.PartFile, Mime: mime, URL: obj.AssetPointer, Filename: obj.AssetPointer})
		case obj.Text != "":
			cv.text(msg, obj.Text)
		default:
			cv.res.Skip("part:" + importer.TypeName(obj.ContentType))
		}
	}
}

func (cv *converter) text(msg *loom.Message, s string) {
	if strings.TrimSpace(s) != "" {
		importer.AddPart(msg, loom.Part{Type: loom.PartText, Text: s})
	}
}

// call adds the tool call an assistant message m addresses to its
// recipient (python, browser, dalle.text2im, a GPT's action) to msg.
func (cv *converter) call(msg *loom.Message, m *message, recipient string) {
	text := m.Content.Text
	if text == "" {
		var parts []string
		for _, raw := range m.Content.Parts {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				parts = append(parts, s)
			}
		}
		text = strings.Join(parts, "\n")
	}
	var buf bytes.Buffer
	input := []byte(strings.TrimSpace(text))
	if bytes.HasPrefix(input, []byte("{")) && json.Compact(&buf, input) == nil {
		input = buf.Bytes()
	} else {
		key := "input"
		if m.Content.ContentType == "code" {
			key = "code"
		}
		input, _ = json.Marshal(map[string]string{key: text})
	}
	t := cv.now
	i := importer.AddPart(msg, loom.Part{Type: loom.PartTool, CallID: msg.ID + "/" + strconv.Itoa(len(msg.Parts)), Name: recipient, Status: loom.ToolRunning, Input: input, StartedAt: &t})
	cv.open[recipient] = i
}

// result adds a tool's message m to the call it answers in msg, or as
// a call of its own when none waits for it.
func (cv *converter) result(msg *loom.Message, m *message) {
	name := m.Author.Name
	if name == "" {
		name = "tool"
	}
	i, ok := cv.open[name]
	if !ok {
		for k, j := range cv.open {
			if !ok || j > i {
				i, ok, name = j, true, k
			}
		}
	}
	var out strings.Builder
	files := &loom.Message{ID: msg.ID}
	tmp := &converter{res: cv.res}
	tmp.content(files, m)
	for _, p := range files.Parts {
		if p.Type == loom.PartText {
			if out.Len() > 0 {
				out.WriteString("\n")
			}
			out.WriteString(p.Text)
		} else {
			importer.AddPart(msg, p)
		}
	}
	output, _ := json.Marshal(out.String())
	t := cv.now
	if !ok {
		i = importer.AddPart(msg, loom.Part{Type: loom.PartTool, CallID: msg.ID + "/" + strconv.Itoa(len(msg.Parts)), Name: name, Input: json.RawMessage("{}"), StartedAt: &t})
	} else {
		delete(cv.open, name)
	}
	p := &msg.Parts[i]
	p.Output, p.EndedAt, p.Status = output, &t, loom.ToolCompleted
	if m.Content.ContentType == "system_error" {
		p.Status, p.Error = loom.ToolError, strings.TrimSpace(m.Content.Name+": "+m.Content.Text)
	}
}

// fileURL names a file ChatGPT's export holds beside conversations.json
// by its id.
func fileURL(id string) string {
	if id == "" {
		return ""
	}
	return "file-service://" + id
}

// oneLine is an id trimmed, "" when it spans lines.
func oneLine(id string) string {
	id = strings.TrimSpace(id)
	if strings.ContainsAny(id, "\n\r") {
		return ""
	}
	return id
}
