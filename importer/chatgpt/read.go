package chatgpt

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
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
