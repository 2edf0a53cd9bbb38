package mcpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom/agent/mcpclient"
	"github.com/loomhq/loom/config"
)

// serverEnv makes the test binary an MCP server on its standard input and
// output instead of running the tests: its value says how it behaves.
const serverEnv = "LOOM_MCPCLIENT_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(serve(mode))
	}
	os.Exit(m.Run())
}

type echoArgs struct {
	Text string `json:"text,omitempty"`
}

// serve runs the test's MCP server: "serve" answers with its tools,
// "exit" ends before a word, "stall" says its pid on the FIFO $STALL_FIFO
// and then never answers nor reads.
func serve(mode string) int {
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "no configuration")
		return 3
	case "stall":
		f, err := os.OpenFile(os.Getenv("STALL_FIFO"), os.O_WRONLY, 0)
		if err != nil {
			return 1
		}
		fmt.Fprintf(f, "%d\n", os.Getpid())
		f.Close()
		time.Sleep(time.Hour) // stalled: neither reads nor answers
		return 0
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "testserver", Version: "1"}, nil)
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Says text back."},
		func(_ context.Context, _ *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
			return text(a.Text), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "fail", Description: "Fails as a tool does."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			r := text("no such file: notes.txt")
			r.IsError = true
			return r, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "where", Description: "Says its environment and directory."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			wd, _ := os.Getwd()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: os.Getenv("GREETING")}, &sdk.TextContent{Text: wd}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "big", Description: "Returns more than loom keeps."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return text(strings.Repeat("é", mcpclient.MaxToolOutput)), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "die", Description: "Ends the server mid-call."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			os.Exit(1)
			return nil, nil, nil
		})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// server is config.toml's entry for the test's server in mode.
func server(mode string, env map[string]string) config.MCPServer {
	e := map[string]string{serverEnv: mode}
	for k, v := range env {
		e[k] = v
	}
	return config.MCPServer{Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: e}
}

func toolNames(tools []mcpclient.RemoteTool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func tool(t *testing.T, tools []mcpclient.RemoteTool, name string) mcpclient.RemoteTool {
	t.Helper()
	i := slices.IndexFunc(tools, func(rt mcpclient.RemoteTool) bool { return rt.Name == name })
	if i < 0 {
		t.Fatalf("no tool %s among %v", name, toolNames(tools))
	}
	return tools[i]
}

// A server's tools are offered as mcp__SERVER__TOOL with their
// descriptions and schemas, and a call returns the tool's text; a result
// the server marks as an error is an error with its text; a long result
// is cut, whole characters kept, saying so.
func TestToolsListedAndCalled(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	off := false
	c := &mcpclient.Clients{Version: "test"}
	t.Cleanup(func() { c.Close() })
	s := server("serve", map[string]string{"GREETING": "hello from config"})
	s.Cwd = dir
	tools, errs := c.Tools(ctx, map[string]config.MCPServer{
		"notes":    s,
		"disabled": {Command: "/nonexistent/never-started", Enabled: &off},
	})
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := []string{"mcp__notes__big", "mcp__notes__die", "mcp__notes__echo", "mcp__notes__fail", "mcp__notes__where"}
	if got := toolNames(tools); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	echo := tool(t, tools, "mcp__notes__echo")
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(echo.Schema, &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil {
		t.Fatalf("echo's schema %s: %v", echo.Schema, err)
	}
	if echo.Server != "notes" || echo.Tool != "echo" || echo.Description != "Says text back." {
		t.Fatalf("echo = %+v", echo)
	}

	if out, err := echo.Call(ctx, json.RawMessage(`{"text":"hi there"}`)); err != nil || out != "hi there" {
		t.Fatalf("echo: %q, %v", out, err)
	}
	if out, err := echo.Call(ctx, nil); err != nil || out != "" {
		t.Fatalf("echo with no input: %q, %v", out, err)
	}
	if out, err := tool(t, tools, "mcp__notes__where").Call(ctx, json.RawMessage(`null`)); err != nil || out != "hello from config\n"+dir {
		t.Fatalf("where: %q, %v; want the configured environment and directory", out, err)
	}
	if out, err := tool(t, tools, "mcp__notes__fail").Call(ctx, nil); err == nil || err.Error() != "no such file: notes.txt" || out != "" {
		t.Fatalf("fail: %q, %v", out, err)
	}
	out, err := tool(t, tools, "mcp__notes__big").Call(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, note, ok := strings.Cut(out, "\n[… cut: the result was ")
	if !ok || len(body) > mcpclient.MaxToolOutput || strings.Trim(body, "é") != "" || note != fmt.Sprintf("%d bytes]", 2*mcpclient.MaxToolOutput) {
		t.Fatalf("a long result: %d bytes, ending %q", len(out), out[max(0, len(out)-60):])
	}

	// Asking again reuses the connection; an allow-list keeps to its tools.
	s.Tools = []string{"echo"}
	again, errs := c.Tools(ctx, map[string]config.MCPServer{"notes": s})
	if len(errs) != 0 || !slices.Equal(toolNames(again), []string{"mcp__notes__echo"}) {
		t.Fatalf("with tools = [echo]: %v, %v", toolNames(again), errs)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if _, err := echo.Call(ctx, json.RawMessage(`{"text":"x"}`)); err == nil {
		t.Fatal("a call after Close succeeded")
	}
}

// A server that exits before answering, or a command that does not
// exist, is reported once, by name, and left out; the others' tools are
// offered.
func TestServersThatCannotStart(t *testing.T) {
	ctx := context.Background()
	c := &mcpclient.Clients{}
	t.Cleanup(func() { c.Close() })
	servers := map[string]config.MCPServer{
		"gone":    server("exit", nil),
		"missing": {Command: filepath.Join(t.TempDir(), "no-such-server")},
		"notes":   server("serve", nil),
	}
	tools, errs := c.Tools(ctx, servers)
	if len(tools) == 0 || tools[0].Server != "notes" {
		t.Fatalf("the working server's tools: %v", toolNames(tools))
	}
	if len(errs) != 2 || !strings.HasPrefix(errs[0].Error(), "MCP server gone: cannot connect: ") ||
		!strings.HasPrefix(errs[1].Error(), "MCP server missing: cannot connect: ") || !strings.Contains(errs[1].Error(), "no such file") {
		t.Fatalf("errors %v", errs)
	}
	for _, err := range errs {
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("an error of more than one line: %q", err)
		}
	}
	if _, errs := c.Tools(ctx, servers); len(errs) != 0 {
		t.Fatalf("the servers that failed were tried, or reported, again: %v", errs)
	}
}

// A server that exits in the middle of a call fails that call, with the
// server and tool named.
func TestServerExitsDuringCall(t *testing.T) {
	ctx := context.Background()
	c := &mcpclient.Clients{}
	t.Cleanup(func() { c.Close() })
	tools, errs := c.Tools(ctx, map[string]config.MCPServer{"notes": server("serve", nil)})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	_, err := tool(t, tools, "mcp__notes__die").Call(ctx, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "MCP server notes: die: ") {
		t.Fatalf("a call the server died in: %v", err)
	}
	if _, err := tool(t, tools, "mcp__notes__echo").Call(ctx, nil); err == nil {
		t.Fatal("a call to a dead server succeeded")
	}
}

func TestToolName(t *testing.T) {
	for _, tc := range []struct{ server, tool, want string }{
		{"notes", "echo", "mcp__notes__echo"},
		{"my server", "read.file", "mcp__my_server__read_file"},
		{"s", strings.Repeat("t", 80), ("mcp__s__" + strings.Repeat("t", 80))[:64]},
	} {
		if got := mcpclient.ToolName(tc.server, tc.tool); got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
	}
}
