// Package deepseektui reads the sessions of DeepSeek TUI (the deepseek
// terminal agent; CodeWhale before it was renamed) for loom's importer.
//
// DeepSeek TUI keeps each session as one JSON document,
// ~/.deepseek/sessions/<id>.json (~/.codewhale/sessions/ for the
// earlier name; latest.json and offline_queue.json beside them are no
// sessions): metadata (id, title, workspace, model, created_at,
// updated_at) and messages, each a role (user or assistant), a time, a
// model, and content that is text or a list of blocks in Anthropic's
// form (text, thinking, tool_use, tool_result).
//
// Each message is a message under its index; thinking is reasoning, a
// tool_use a tool call that the tool_result of a later message
// completes (a user message that only carries results adds no
// message). The metadata's workspace is the working directory, its
// title the session's. DeepSeek TUI writes no usage in the file.
//
// Learnt from agentsview's reader of it (wesm/agentsview at
// a5de5daca0005d2794f6fe8e0412795cb2873e4b,
// internal/parser/deepseek_tui.go); the fixtures in testdata are built
// to that format.
package deepseektui

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads DeepSeek TUI's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is DeepSeek TUI's name in loom.
const Tool = "deepseek-tui"

// maxSession bounds a session document, read whole.
const maxSession = 128 << 20

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is DeepSeek's.
func (Format) Provider() string { return "deepseek" }

// Roots are $LOOM_DEEPSEEK_TUI_DIR when set, else ~/.deepseek/sessions
// and ~/.codewhale/sessions.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_DEEPSEEK_TUI_DIR", []string{".deepseek", "sessions"}, []string{".codewhale", "sessions"})
}

// Bundles lists each session document under root, one bundle each.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		n := d.Name()
		return strings.HasSuffix(n, ".json") && n != "latest.json" && n != "offline_queue.json"
	})
}

type document struct {
	Metadata struct {
		ID        string `json:"id"`
		Title     string `json:"title"`
		Workspace string `json:"workspace"`
		Model     string `json:"model"`
		Created   string `json:"created_at"`
		Updated   string `json:"updated_at"`
	} `json:"metadata"`
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Timestamp string          `json:"timestamp"`
		Model     string          `json:"model"`
	} `json:"messages"`
}

// Read reads one session document.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	data, err := importer.ReadSmall(name, maxSession)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s: not DeepSeek TUI's session: %w", Tool, name, err)
	}
	res := &importer.Result{}
	res.CheckUTF8(name, 0, data)
	at := importer.ISOTime(doc.Metadata.Created)
	calls := importer.ToolCalls{}
	var msgs []*loom.Message
	for i, m := range doc.Messages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Times only go forward: a message dated before the one before
		// it is taken at that one's.
		if ts := importer.ISOTime(m.Timestamp); ts.After(at) {
			at = ts
		}
		mid := strconv.Itoa(i)
		done := at
		msg := &loom.Message{ID: mid, CreatedAt: at, CompletedAt: &done}
		switch m.Role {
		case "user":
			msg.Role = loom.RoleUser
		case "assistant":
			msg.Role, msg.Model = loom.RoleAssistant, cmp.Or(m.Model, doc.Metadata.Model)
		default:
			res.Skip("unknown:" + importer.TypeName(m.Role))
			continue
		}
		blocks, ok := importer.ContentBlocks(m.Content)
		if !ok {
			res.Problemf(name, 0, "message "+mid+": content that is neither text nor blocks")
			continue
		}
		for j := range blocks {
			// DeepSeek TUI's other names of a call's parts.
			bl := &blocks[j]
			switch bl.Type {
			case "server_tool_use":
				bl.Type = "tool_use"
			case "tool_search_tool_result", "code_execution_tool_result":
				bl.Type = "tool_result"
			}
		}
		calls.AddBlocks(res, msg, blocks, at, func(reason string) { res.Problemf(name, 0, "message "+mid+": "+reason) })
		if len(msg.Parts) == 0 {
			continue
		}
		msgs = append(msgs, msg)
	}
	id := importer.LineID(cmp.Or(doc.Metadata.ID, strings.TrimSuffix(filepath.Base(name), ".json")))
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: name, Messages: msgs,
		Title: importer.Clip(strings.TrimSpace(doc.Metadata.Title), 200), Cwd: doc.Metadata.Workspace,
		Model: doc.Metadata.Model, Provider: "deepseek", CreatedAt: importer.ISOTime(doc.Metadata.Created), UpdatedAt: importer.ISOTime(doc.Metadata.Updated)}
	res.Keep(s, "session")
	return res, nil
}
