package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent/mcpclient"
	"github.com/loomhq/loom/memory"
)

// Tool is something the model may call.
type Tool interface {
	Spec() loom.ToolSpec
	// Run executes a call and returns its output text; an error becomes
	// the tool part's error, which the model sees.
	Run(ctx context.Context, c *Call) (string, error)
}

// Call is one tool call with what a tool needs to run it.
type Call struct {
	Loop    *Loop
	Session *loom.Session
	Part    loom.Part
	// Emit passes events to the caller (a sub-agent's, tagged with its
	// session).
	Emit func(Event)
}

func (c *Call) decode(v any) error {
	if err := json.Unmarshal(c.Part.Input, v); err != nil {
		return fmt.Errorf("invalid arguments for %s: %v", c.Part.Name, err)
	}
	return nil
}

// SessionSearch searches the user's sessions.
type SessionSearch struct{}

// Spec implements Tool.
func (SessionSearch) Spec() loom.ToolSpec {
	return loom.ToolSpec{
		Name:        "session_search",
		Description: "Full-text search over everything said in the user's earlier and current sessions. Every word must appear; quote a phrase to match it exactly. Returns matching messages with the session id, seq, role and a snippet.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"words to find"},"limit":{"type":"integer","description":"most results to return (default 10)"}},"required":["query"]}`),
	}
}

// Run implements Tool.
func (SessionSearch) Run(ctx context.Context, c *Call) (string, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := c.decode(&in); err != nil {
		return "", err
	}
	if in.Limit <= 0 || in.Limit > 50 {
		in.Limit = 10
	}
	var st loom.Reader = c.Loop.Store
	if c.Loop.Redact != nil {
		st = c.Loop.Redact.Gate(st)
	}
	hits, err := st.Search(ctx, loom.SearchQuery{Text: in.Query, UserID: c.Session.UserID, Limit: in.Limit})
	if err != nil {
		return "", err
	}
	type hit struct {
		SessionID string `json:"session_id"`
		Title     string `json:"title,omitempty"`
		Seq       int64  `json:"seq"`
		Role      string `json:"role"`
		Snippet   string `json:"snippet"`
		CreatedAt string `json:"created_at"`
	}
	out := make([]hit, 0, len(hits))
	for _, h := range hits {
		out = append(out, hit{h.SessionID, h.SessionTitle, h.Seq, h.Role, h.Snippet, loom.FormatTime(h.CreatedAt)})
	}
	b, _ := json.Marshal(out)
	return string(b), nil
}

// Memory reads or appends to MEMORY.md (what the agent keeps) and USER.md
// (about the user).
type Memory struct{}

// Spec implements Tool.
func (Memory) Spec() loom.ToolSpec {
	return loom.ToolSpec{
		Name:        "memory",
		Description: "Read or append to the long-term memory files, which are shown to you at the start of every session: 'memory' (MEMORY.md, facts and decisions worth keeping) and 'user' (USER.md, about the user). Append only what will matter later.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["read","append"]},"file":{"type":"string","enum":["memory","user"]},"text":{"type":"string","description":"text to append"}},"required":["action","file"]}`),
	}
}

// Run implements Tool.
func (Memory) Run(ctx context.Context, c *Call) (string, error) {
	var in struct {
		Action, File, Text string
	}
	if err := c.decode(&in); err != nil {
		return "", err
	}
	path := c.Loop.MemoryFile
	if in.File == "user" {
		path = c.Loop.UserFile
	} else if in.File != "memory" {
		return "", fmt.Errorf("file must be \"memory\" or \"user\", not %q", in.File)
	}
	if path == "" {
		return "", fmt.Errorf("memory files are not configured")
	}
	switch in.Action {
	case "read":
		text, err := memory.Read(path)
		if text == "" && err == nil {
			return "(empty)", nil
		}
		return c.Loop.redact(text), err
	case "append":
		if err := memory.Append(path, in.Text); err != nil {
			return "", err
		}
		return "appended to " + filepath.Base(path), nil
	}
	return "", fmt.Errorf("action must be \"read\" or \"append\", not %q", in.Action)
}

// maxReadFile bounds what read_file returns.
const maxReadFile = 256 << 10

// ReadFile reads a text file, relative to the session's directory.
type ReadFile struct{}

// Spec implements Tool.
func (ReadFile) Spec() loom.ToolSpec {
	return loom.ToolSpec{
		Name:        "read_file",
		Description: "Read a text file. Relative paths are relative to the working directory. Optionally start at a line (1-based) and read a number of lines.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","description":"first line, 1-based"},"limit":{"type":"integer","description":"number of lines"}},"required":["path"]}`),
	}
}

// Run implements Tool.
func (ReadFile) Run(ctx context.Context, c *Call) (string, error) {
	var in struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := c.decode(&in); err != nil {
		return "", err
	}
	if in.Path == "" {
		return "", fmt.Errorf("path is required")
	}
	path := in.Path
	if !filepath.IsAbs(path) && c.Session.Cwd != "" {
		path = filepath.Join(c.Session.Cwd, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxReadFile)
	line := 0
	for sc.Scan() {
		line++
		if in.Offset > 0 && line < in.Offset {
			continue
		}
		if in.Limit > 0 && in.Offset > 0 && line >= in.Offset+in.Limit || in.Limit > 0 && in.Offset <= 0 && line > in.Limit {
			break
		}
		if b.Len()+len(sc.Bytes()) > maxReadFile {
			fmt.Fprintf(&b, "… (truncated at %d bytes; read on with offset %d)\n", maxReadFile, line)
			break
		}
		b.Write(sc.Bytes())
		b.WriteByte('\n')
		if err := ctx.Err(); err != nil {
			return "", err
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// SubAgentName is the name of the tool that runs a sub-agent.
const SubAgentName = "agent"

// SubAgent runs a task in a child session with its own history, lock and
// usage, and returns the child's final reply.
type SubAgent struct{}

// Spec implements Tool.
func (SubAgent) Spec() loom.ToolSpec {
	return loom.ToolSpec{
		Name:        SubAgentName,
		Description: "Hand a self-contained task to a sub-agent. It works in its own session with the same tools (except this one) and returns its final answer.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"the task, with everything the sub-agent needs to know"},"name":{"type":"string","description":"a short name for the sub-agent"}},"required":["prompt"]}`),
	}
}

func subAgentLabel(input json.RawMessage) string {
	var in struct {
		Name string `json:"name"`
	}
	json.Unmarshal(input, &in)
	if in.Name == "" {
		return "subagent"
	}
	return in.Name
}

// Run implements Tool.
func (SubAgent) Run(ctx context.Context, c *Call) (string, error) {
	if c.Loop.depth > 0 {
		return "", fmt.Errorf("a sub-agent cannot start another sub-agent")
	}
	var in struct {
		Prompt string `json:"prompt"`
		Name   string `json:"name"`
	}
	if err := c.decode(&in); err != nil {
		return "", err
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return "", fmt.Errorf("prompt is required")
	}
	var meta struct {
		SessionID string `json:"session_id"`
	}
	json.Unmarshal(c.Part.Metadata, &meta)
	if meta.SessionID == "" {
		meta.SessionID = loom.NewID()
	}
	parent := c.Session
	child := &loom.Session{
		ID: meta.SessionID, UserID: parent.UserID, Kind: loom.KindSubagent, ParentID: parent.ID,
		Surface: parent.Surface, Project: parent.Project, Cwd: parent.Cwd,
		Model: c.Loop.Model, Provider: c.Loop.Provider.Name(), Profile: parent.Profile,
		Title: subAgentLabel(c.Part.Input) + ": " + loom.TitleFrom(in.Prompt),
	}
	lease, err := c.Loop.Store.Lock(ctx, child.ID)
	if err != nil {
		return "", err
	}
	defer lease.Release(context.WithoutCancel(ctx))
	sub := *c.Loop
	sub.depth = c.Loop.depth + 1
	sub.Tools = nil
	for _, t := range c.Loop.Tools {
		if t.Spec().Name != SubAgentName {
			sub.Tools = append(sub.Tools, t)
		}
	}
	res, err := sub.Turn(ctx, child, in.Prompt, c.Emit)
	if err != nil {
		return "", fmt.Errorf("sub-agent: %w", err)
	}
	return res.Text, nil
}

func readFileText(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// MCPTool is a tool of an MCP server that config.toml names, offered to
// the model as mcp__SERVER__TOOL.
type MCPTool struct{ Remote mcpclient.RemoteTool }

// Spec implements Tool.
func (t MCPTool) Spec() loom.ToolSpec {
	desc := t.Remote.Description
	if desc == "" {
		desc = "Tool " + t.Remote.Tool + " of the MCP server " + t.Remote.Server + "."
	}
	return loom.ToolSpec{Name: t.Remote.Name, Description: desc, Schema: t.Remote.Schema}
}

// Run implements Tool.
func (t MCPTool) Run(ctx context.Context, c *Call) (string, error) {
	return t.Remote.Call(ctx, c.Part.Input)
}
