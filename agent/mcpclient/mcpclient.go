// Package mcpclient connects the agent to the MCP servers config.toml names
// and offers their tools to the model, on the official Go SDK.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom/config"
)

// DefaultStartupTimeout bounds connecting to an MCP server and listing
// its tools when its configuration sets no startup_timeout.
const DefaultStartupTimeout = 10 * time.Second

// MaxToolOutput bounds what one call of a remote tool returns to the
// model (and so what its tool part stores).
const MaxToolOutput = 256 << 10

// Clients holds loom's connections to the MCP servers its configuration
// names, made on first use and kept for the process: a conversation's
// every turn uses the same server processes. A server that cannot be
// reached is reported once and left out; it is not tried again by this
// process.
type Clients struct {
	Version string
	Logger  *slog.Logger

	mu      sync.Mutex
	remotes map[string]*remote
}

// remote is one server: its session and tools, or why it has none.
type remote struct {
	session *sdk.ClientSession
	tools   []*sdk.Tool
	err     error
}

// RemoteTool is one tool of an MCP server, as loom's agent offers it.
type RemoteTool struct {
	// Name is what the model calls it: mcp__SERVER__TOOL.
	Name        string
	Server      string
	Tool        string
	Description string
	Schema      json.RawMessage
	session     *sdk.ClientSession
}

// Tools connects to every enabled server of servers not connected yet
// and returns their tools, in server name order; errs says, once per
// server, why one could not be reached.
func (c *Clients) Tools(ctx context.Context, servers map[string]config.MCPServer) (tools []RemoteTool, errs []error) {
	names := make([]string, 0, len(servers))
	for name, s := range servers {
		if s.On() {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.remotes == nil {
		c.remotes = map[string]*remote{}
	}
	for _, name := range names {
		r, ok := c.remotes[name]
		if !ok {
			r = c.connect(ctx, name, servers[name])
			c.remotes[name] = r
			if r.err != nil {
				errs = append(errs, r.err)
			}
		}
		for _, t := range r.tools {
			if allow := servers[name].Tools; len(allow) > 0 && !slices.Contains(allow, t.Name) {
				continue
			}
			schema, err := json.Marshal(t.InputSchema)
			if err != nil || string(schema) == "null" {
				schema = json.RawMessage(`{"type":"object"}`)
			}
			tools = append(tools, RemoteTool{
				Name: ToolName(name, t.Name), Server: name, Tool: t.Name,
				Description: t.Description, Schema: schema, session: r.session,
			})
		}
	}
	return tools, errs
}

func (c *Clients) connect(ctx context.Context, name string, s config.MCPServer) *remote {
	timeout := DefaultStartupTimeout
	if d, err := time.ParseDuration(s.StartupTimeout); err == nil && d > 0 {
		timeout = d
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var t sdk.Transport
	if s.Command != "" {
		// The process outlives this call's context: it serves the
		// conversation until Close.
		cmd := exec.CommandContext(context.WithoutCancel(ctx), s.Command, s.Args...)
		cmd.Env = os.Environ()
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Dir = s.Cwd
		// A server that has not exited a second after its stdin closed
		// is stopped (SIGTERM), so closing a stalled one, on Ctrl+C
		// too, takes a second, not the SDK's five.
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	} else {
		header := http.Header{}
		for k, v := range s.Headers {
			header.Set(k, v)
		}
		if s.BearerTokenEnvVar != "" {
			header.Set("Authorization", "Bearer "+os.Getenv(s.BearerTokenEnvVar))
		}
		t = &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &http.Client{Transport: headers{header, http.DefaultTransport}}}
	}
	version := c.Version
	if version == "" {
		version = "dev"
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "loom", Version: version}, nil)
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		return &remote{err: fmt.Errorf("MCP server %s: cannot connect: %w", name, err)}
	}
	var tools []*sdk.Tool
	for tl, err := range session.Tools(ctx, nil) {
		if err != nil {
			session.Close()
			return &remote{err: fmt.Errorf("MCP server %s: cannot list its tools: %w", name, err)}
		}
		tools = append(tools, tl)
	}
	return &remote{session: session, tools: tools}
}

// Close ends every connection (and so every server process started).
func (c *Clients) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, r := range c.remotes {
		if r.session != nil {
			if err := r.session.Close(); err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, err)
			}
		}
	}
	c.remotes = nil
	return errors.Join(errs...)
}

// Call runs the tool with input (a JSON object) and returns its text.
// A result the server marks as an error is returned as an error with
// its text, which the model sees.
func (t RemoteTool) Call(ctx context.Context, input json.RawMessage) (string, error) {
	var args any = map[string]any{}
	if len(input) > 0 && string(input) != "null" {
		args = input
	}
	res, err := t.session.CallTool(ctx, &sdk.CallToolParams{Name: t.Tool, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("MCP server %s: %s: %w", t.Server, t.Tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(c.Text)
		default:
			if raw, err := json.Marshal(c); err == nil {
				b.Write(raw)
			}
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		b.Write(raw)
	}
	out := b.String()
	if len(out) > MaxToolOutput {
		out = strings.ToValidUTF8(out[:MaxToolOutput], "") + fmt.Sprintf("\n[… cut: the result was %d bytes]", b.Len())
	}
	if res.IsError {
		return "", errors.New(out)
	}
	return out, nil
}

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]`) })

// ToolName is the name loom's agent gives a server's tool:
// mcp__SERVER__TOOL, made of what every provider accepts in a tool name
// and at most 64 characters.
func ToolName(server, tool string) string {
	n := "mcp__" + unsafeName().ReplaceAllString(server, "_") + "__" + unsafeName().ReplaceAllString(tool, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// headers adds fixed headers to every request.
type headers struct {
	h    http.Header
	next http.RoundTripper
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.next.RoundTrip(r)
}
