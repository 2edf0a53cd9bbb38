// Package mcphost reads the sessions of MCPHost (mark3labs's mcphost,
// a Go program that connects a model to MCP servers) for loom's
// importer.
//
// MCPHost saves a session only where it is told to: the JSON document
// that --save-session or --session names, written again whole after
// each message. It has no directory of its own, so loom reads the files
// or directories it is given. A document holds version ("1.0"),
// created_at, updated_at, metadata (mcphost_version, provider, model)
// and messages: id, role (user, assistant, tool, system), content,
// timestamp, an assistant's tool_calls (id, name, arguments: JSON text)
// and a tool message's tool_call_id, its content the JSON of the tool's
// result as MCPHost's model library holds it ({"type":"text","data":
// {"text": …}}, the text the MCP server's result).
//
// A document is a session named by its file and its creation time (a
// session copied to another file with --load-session and
// --save-session goes on as a session of its own); each message is a
// loom message under MCPHost's id, a tool message completing its call
// with the text of the server's result. MCPHost keeps no usage. A
// document that is not JSON is a problem; a JSON document that is not a
// session (no version or no messages) is counted as skipped.
//
// The format is the one MCPHost v0.34.0 wrote when run offline against
// a fake model (testdata/real).
package mcphost

import (
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads MCPHost's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is MCPHost's name in loom.
const Tool = "mcphost"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": a session names its provider.
func (Format) Provider() string { return "" }

// Roots is none: MCPHost saves a session where --save-session names,
// so loom reads the files and directories it is given.
func (Format) Roots(func(string) string, string) []string { return nil }

// Bundles lists every *.json under root, leaving out dependency, build
// and version-control directories; root itself may be one file, read
// whatever its name.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.NamedFiles(ctx, Tool, root, func(name string) bool {
		return strings.HasSuffix(name, ".json")
	})
}

// document is a session's file.
type document struct {
	Version   *string   `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Metadata  struct {
		Version  string `json:"mcphost_version"`
		Provider string `json:"provider"`
		Model    string `json:"model"`
	} `json:"metadata"`
	Messages *[]message `json:"messages"`
}

// message is one message of a session.
type message struct {
	ID         string               `json:"id"`
	Role       string               `json:"role"`
	Content    string               `json:"content"`
	Timestamp  time.Time            `json:"timestamp"`
	ToolCalls  []importer.NamedCall `json:"tool_calls"`
	ToolCallID string               `json:"tool_call_id"`
}

// Read reads one session's document.
func (Format) Read(_ context.Context, b importer.Bundle) (*importer.Result, error) {
	return importer.ReadWhole(Tool, b, parse)
}

// parse reads the session document data of file name, modified at
// modified.
func parse(name string, data []byte, modified time.Time) *importer.Result {
	res := &importer.Result{}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		res.Problemf(name, 0, "not an MCPHost session: "+importer.Excerpt(err.Error()))
		return res
	}
	res.CheckUTF8(name, 0, data)
	if doc.Version == nil || doc.Messages == nil {
		res.Skip("not-a-session")
		return res
	}
	created := doc.CreatedAt.UTC()
	if created.IsZero() || created.Year() < 2000 {
		created = modified
	}
	model := importer.Clip(doc.Metadata.Model, 256)
	t := &importer.Transcript{Res: res}
	for i, m := range *doc.Messages {
		at := m.Timestamp.UTC()
		if at.IsZero() || at.Year() < 2000 {
			at = created
		}
		mid := cmp.Or(importer.LineID(m.ID), "n"+strconv.Itoa(i))
		if m.Role == "tool" {
			out, failed := result(m.Content)
			t.Complete(m.ToolCallID, out, failed, at)
			continue
		}
		msg := &loom.Message{ID: mid, CreatedAt: at}
		switch m.Role {
		case "user":
			msg.Role = loom.RoleUser
		case "assistant":
			msg.Role, msg.Model = loom.RoleAssistant, model
		case "system":
			msg.Role = loom.RoleSystem
		default:
			res.Skip("unknown:" + importer.TypeName(m.Role))
			continue
		}
		if strings.TrimSpace(m.Content) != "" {
			msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/0", Type: loom.PartText, Text: m.Content})
		}
		for k, c := range m.ToolCalls {
			msg.Parts = append(msg.Parts, importer.ToolCall(mid+"/call/"+strconv.Itoa(k), c.ID, c.Name, c.Arguments))
		}
		t.Add(msg)
	}
	base := strings.TrimSuffix(filepath.Base(name), ".json")
	s := t.Session(base+"-"+created.Format("20060102T150405.000000000Z"), name)
	if s == nil {
		return res
	}
	s.Model, s.Provider = model, importer.Clip(doc.Metadata.Provider, 256)
	if u := doc.UpdatedAt.UTC(); u.After(s.UpdatedAt) {
		s.UpdatedAt = u
	}
	if created.Before(s.CreatedAt) {
		s.CreatedAt = created
	}
	res.Sessions = append(res.Sessions, s)
	return res
}

// result is the text of a tool's result as MCPHost keeps it, and
// whether the tool failed: the JSON of its model library's output
// ({"type":"text","data":{"text":…}}, or type error with data.error),
// whose text is the MCP server's result ({"content":[{"type":"text",
// "text":…}],"isError":…}), each unwrapped where it is one; the
// content as it is otherwise.
func result(content string) (string, bool) {
	var out struct {
		Type string `json:"type"`
		Data struct {
			Text  *string `json:"text"`
			Error *string `json:"error"`
		} `json:"data"`
	}
	if json.Unmarshal([]byte(content), &out) != nil {
		return content, false
	}
	switch {
	case out.Type == "error" && out.Data.Error != nil:
		return *out.Data.Error, true
	case out.Data.Text == nil:
		return content, false
	}
	text := *out.Data.Text
	var mcp struct {
		Content *[]struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if json.Unmarshal([]byte(text), &mcp) != nil || mcp.Content == nil {
		return text, false
	}
	var texts []string
	for _, c := range *mcp.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n"), mcp.IsError
}
