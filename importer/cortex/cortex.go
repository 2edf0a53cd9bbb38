// Package cortex reads the conversations of Snowflake's Cortex Code
// (the cortex command) for loom's importer.
//
// Cortex Code keeps each conversation in ~/.snowflake/cortex/conversations
// as <id>.json: the session's id, title, working directory, git root
// and branch, times, and its history, a list of messages (role, id,
// user_sent_time, content blocks: text, which Cortex marks internalOnly
// or wraps in <system-reminder> when it is its own context; tool_use,
// {tool_use: {tool_use_id, name, input}}; tool_result, {tool_result:
// {tool_use_id, name, content, status}}). A conversation grown past
// what Cortex writes in one document keeps its history in
// <id>.history.jsonl beside it, a message a line. Backups
// (<id>.back.<time>.json) are no conversations.
//
// Each message is a message under its id (or index): a user text block
// a prompt, an internal one a system message, the assistant's text and
// calls a reply, a tool result completing its call (failed when its
// status says error). Cortex writes no usage in the files.
//
// Learnt from agentsview's reader of it (wesm/agentsview at
// a5de5daca0005d2794f6fe8e0412795cb2873e4b, internal/parser/cortex.go);
// the fixtures in testdata are built to that format.
package cortex

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Cortex Code's conversations. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Cortex Code's name in loom.
const Tool = "cortex"

const historySuffix = ".history.jsonl"

// maxDocument bounds a conversation document, read whole.
const maxDocument = 128 << 20

var backup = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.back\.[^/]*\.json$`) })

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Snowflake's.
func (Format) Provider() string { return "snowflake" }

// Roots are $LOOM_CORTEX_DIR when set, else
// ~/.snowflake/cortex/conversations.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_CORTEX_DIR", []string{".snowflake", "cortex", "conversations"})
}

// Bundles lists each conversation document under root, with its
// history file when it has one.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	if strings.HasSuffix(root, historySuffix) {
		root = strings.TrimSuffix(root, historySuffix) + ".json"
	}
	bs, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".json") && !backup().MatchString(d.Name())
	})
	for i := range bs {
		if h := strings.TrimSuffix(bs[i].Name(), ".json") + historySuffix; importer.RegularFile(h) == nil {
			bs[i].Files = append(bs[i].Files, h)
		}
	}
	return bs, err
}

type block struct {
	Type         string `json:"type"`
	Text         string `json:"text"`
	InternalOnly bool   `json:"internalOnly"`
	ToolUse      *struct {
		ID    string          `json:"tool_use_id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"tool_use"`
	ToolResult *struct {
		ID      string  `json:"tool_use_id"`
		Content []block `json:"content"`
		Status  string  `json:"status"`
	} `json:"tool_result"`
}

type message struct {
	Role     string  `json:"role"`
	ID       string  `json:"id"`
	Content  []block `json:"content"`
	SentTime string  `json:"user_sent_time"`
}

type document struct {
	SessionID   string    `json:"session_id"`
	Title       string    `json:"title"`
	WorkingDir  string    `json:"working_directory"`
	GitRoot     string    `json:"git_root"`
	GitBranch   string    `json:"git_branch"`
	CreatedAt   string    `json:"created_at"`
	LastUpdated string    `json:"last_updated"`
	History     []message `json:"history"`
}

// Read reads one conversation.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	data, err := importer.ReadSmall(name, maxDocument)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s: not Cortex Code's conversation: %w", Tool, name, err)
	}
	res := &importer.Result{}
	res.CheckUTF8(name, 0, data)
	history := doc.History
	if len(b.Files) > 1 && len(history) == 0 {
		if history, err = historyLines(ctx, b.Files[1], res); err != nil {
			return nil, err
		}
	}
	at := importer.ISOTime(doc.CreatedAt)
	t := &importer.Transcript{Res: res}
	for i, m := range history {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if ts := importer.ISOTime(m.SentTime); ts.After(at) {
			at = ts
		}
		addMessage(t, cmp.Or(importer.LineID(m.ID), strconv.Itoa(i)), m, at)
	}
	id := importer.LineID(cmp.Or(doc.SessionID, strings.TrimSuffix(filepath.Base(name), ".json")))
	s := t.Session(id, name)
	if s == nil {
		return res, nil
	}
	if title := strings.TrimSpace(doc.Title); !strings.HasPrefix(title, "Chat for session:") {
		s.Title = importer.Clip(title, 200)
	}
	s.Cwd, s.GitBranch, s.Provider = cmp.Or(doc.WorkingDir, doc.GitRoot), doc.GitBranch, "snowflake"
	if u := importer.ISOTime(doc.LastUpdated); u.After(s.UpdatedAt) {
		s.UpdatedAt = u
	}
	res.Sessions = append(res.Sessions, s)
	return res, nil
}

// historyLines reads the history the conversation keeps in a JSONL file
// of its own, a message a line.
func historyLines(ctx context.Context, path string, res *importer.Result) ([]message, error) {
	f, _, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	defer f.Close()
	var history []message
	err = importer.Lines(ctx, f, func(n int, raw []byte) error {
		var m message
		if res.DecodeLine(path, n, raw, &m) {
			history = append(history, m)
		}
		return nil
	}, res.TooLong(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", Tool, path, err)
	}
	return history, nil
}

// addMessage adds message m of the history to t as mid: the context
// Cortex Code added (internal blocks, system reminders) as a system
// message, the user's prompt, the reply; a tool's result completes its
// call.
func addMessage(t *importer.Transcript, mid string, m message, at time.Time) {
	var prompt, context, reply []loom.Part
	for j, bl := range m.Content {
		pid := mid + "/" + strconv.Itoa(j)
		switch {
		case bl.Type == "text" && strings.TrimSpace(bl.Text) == "":
		case bl.Type == "text" && (bl.InternalOnly || strings.Contains(bl.Text, "<system-reminder>")):
			context = append(context, loom.Part{ID: mid + "/context/" + strconv.Itoa(j), Type: loom.PartText, Text: bl.Text})
		case bl.Type == "text" && m.Role == "assistant":
			reply = append(reply, loom.Part{ID: pid, Type: loom.PartText, Text: bl.Text})
		case bl.Type == "text":
			prompt = append(prompt, loom.Part{ID: pid, Type: loom.PartText, Text: bl.Text})
		case bl.Type == "tool_use" && bl.ToolUse != nil && m.Role == "assistant":
			reply = append(reply, importer.ToolCall(pid, bl.ToolUse.ID, bl.ToolUse.Name, bl.ToolUse.Input))
		case bl.Type == "tool_result" && bl.ToolResult != nil:
			var out []string
			for _, c := range bl.ToolResult.Content {
				if c.Text != "" {
					out = append(out, c.Text)
				}
			}
			t.Complete(bl.ToolResult.ID, strings.Join(out, "\n"), strings.EqualFold(bl.ToolResult.Status, "error"), at)
		default:
			t.Res.Skip("block:" + importer.TypeName(bl.Type))
		}
	}
	if len(context) > 0 {
		t.Add(&loom.Message{ID: mid + "/context", Role: loom.RoleSystem, CreatedAt: at, Parts: context})
	}
	if len(prompt) > 0 {
		t.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at, Parts: prompt})
	}
	if len(reply) > 0 {
		t.Join(mid, loom.RoleAssistant, at, reply...)
	}
}
