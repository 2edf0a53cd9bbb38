// Package auggie reads the sessions of Augment's command-line agent
// (Auggie, @augmentcode/auggie) for loom's importer.
//
// Auggie keeps each session as one JSON document,
// ~/.augment/sessions/<session id>.json: its id, title, creation and
// change times, and chatHistory, the exchanges in order. An exchange is
// one model call: request_message (the prompt) or request_nodes (text,
// tool results with tool_use_id, content and is_error, the IDE state
// with the workspace folder), response_text and response_nodes (text,
// tool_use with tool_use_id, tool_name and input_json, thinking), and
// its time (finishedAt).
//
// What becomes what: an exchange with a prompt starts a user message;
// its tool results complete the calls of the exchange before; its
// response is an assistant message (thinking as reasoning, text, calls);
// an exchange that only returns results continues the reply. The first
// workspace folder is the working directory; the title names the
// session. Auggie keeps no token counts in the file (only credits), so
// each exchange counts one model call.
//
// Auggie talks to Augment's own service, which cannot run here: the
// fixtures in testdata are written to the format of the program npm
// ships (@augmentcode/auggie 0.36.0) and public readers of it.
package auggie

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Auggie's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Auggie's name in loom.
const Tool = "auggie"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Augment's.
func (Format) Provider() string { return "augment" }

// Roots is Auggie's sessions directory.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, "AUGMENT_HOME", ".augment"), "sessions")
}

// Bundles lists each session's document.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool { return strings.HasSuffix(d.Name(), ".json") })
}

type document struct {
	SessionID   string `json:"sessionId"`
	Title       string `json:"title"`
	Created     string `json:"created"`
	Modified    string `json:"modified"`
	ChatHistory []struct {
		FinishedAt string `json:"finishedAt"`
		Exchange   struct {
			RequestID      string `json:"request_id"`
			RequestMessage string `json:"request_message"`
			ResponseText   string `json:"response_text"`
			RequestNodes   []struct {
				Type     int `json:"type"`
				TextNode *struct {
					Content string `json:"content"`
				} `json:"text_node"`
				ToolResult *struct {
					ToolUseID string `json:"tool_use_id"`
					Content   string `json:"content"`
					IsError   bool   `json:"is_error"`
				} `json:"tool_result_node"`
				IDEState *struct {
					Folders []struct {
						Root string `json:"folder_root"`
						Repo string `json:"repository_root"`
					} `json:"workspace_folders"`
				} `json:"ide_state_node"`
			} `json:"request_nodes"`
			ResponseNodes []struct {
				Type    int    `json:"type"`
				Content string `json:"content"`
				ToolUse *struct {
					ID    string `json:"tool_use_id"`
					Name  string `json:"tool_name"`
					Input string `json:"input_json"`
				} `json:"tool_use"`
				Thinking *struct {
					Content string `json:"content"`
				} `json:"thinking"`
			} `json:"response_nodes"`
		} `json:"exchange"`
	} `json:"chatHistory"`
}

// Read reads one session's document.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	data, err := importer.ReadSmall(name, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("auggie: %w", err)
	}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("auggie: %s: not an Auggie session: %w", name, err)
	}
	if doc.SessionID == "" && doc.ChatHistory == nil {
		return nil, errors.New("auggie: " + name + ": not an Auggie session (no sessionId, no chatHistory)")
	}
	res := &importer.Result{}
	res.CheckUTF8(name, 0, data)
	t := &importer.Transcript{Res: res}
	at, cwd := importer.ISOTime(doc.Created), ""
	for i, h := range doc.ChatHistory {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ex := h.Exchange
		mid := cmp.Or(importer.LineID(ex.RequestID), strconv.Itoa(i))
		if tm := importer.ISOTime(h.FinishedAt); !tm.IsZero() {
			at = tm
		}
		prompt := ex.RequestMessage
		for _, n := range ex.RequestNodes {
			switch {
			case n.ToolResult != nil:
				t.Complete(n.ToolResult.ToolUseID, n.ToolResult.Content, n.ToolResult.IsError, at)
			case n.TextNode != nil && prompt == "":
				prompt = n.TextNode.Content
			case n.IDEState != nil && len(n.IDEState.Folders) > 0 && cwd == "":
				cwd = cmp.Or(n.IDEState.Folders[0].Repo, n.IDEState.Folders[0].Root)
			}
		}
		if strings.TrimSpace(prompt) != "" {
			t.Add(&loom.Message{ID: mid + "/q", Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{ID: mid + "/q/0", Type: loom.PartText, Text: prompt}}})
		}
		var parts []loom.Part
		text := ""
		for j, n := range ex.ResponseNodes {
			pid := mid + "/" + strconv.Itoa(j)
			switch {
			case n.ToolUse != nil:
				parts = append(parts, importer.ToolCall(pid, n.ToolUse.ID, n.ToolUse.Name, json.RawMessage(strconv.Quote(n.ToolUse.Input))))
			case n.Thinking != nil && strings.TrimSpace(n.Thinking.Content) != "":
				parts = append(parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: n.Thinking.Content})
			case n.Type == 0 && n.Content != "":
				text += n.Content
			}
		}
		if text = cmp.Or(ex.ResponseText, text); strings.TrimSpace(text) != "" {
			parts = append(parts, loom.Part{ID: mid + "/text", Type: loom.PartText, Text: text})
		}
		if m := t.Join(mid, loom.RoleAssistant, at, parts...); m != nil && m.Role == loom.RoleAssistant && len(parts) > 0 {
			m.Usage.APICalls++
		}
	}
	id := cmp.Or(importer.LineID(doc.SessionID), strings.TrimSuffix(filepath.Base(name), ".json"))
	if s := t.Session(id, name); s != nil {
		s.Title, s.Cwd, s.Provider = strings.TrimSpace(doc.Title), cwd, "augment"
		if u := importer.ISOTime(doc.Modified); !u.IsZero() {
			s.UpdatedAt = u
		}
		res.Sessions = append(res.Sessions, s)
	}
	return res, nil
}
