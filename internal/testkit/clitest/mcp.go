package clitest

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPCall is one tool call's outcome: the text the model reads, the
// structured content decoded as JSON, and whether it is a tool error.
type MCPCall struct {
	Text    string
	Data    map[string]any
	isError bool
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args any) MCPCall {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v", name, args, err)
	}
	var c MCPCall
	c.isError = res.IsError
	for _, ct := range res.Content {
		if tc, ok := ct.(*sdk.TextContent); ok {
			c.Text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &c.Data); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, raw, err)
		}
	}
	return c
}

func MustCall(t *testing.T, cs *sdk.ClientSession, name string, args any) MCPCall {
	t.Helper()
	c := callTool(t, cs, name, args)
	if c.isError {
		t.Fatalf("%s(%v) is a tool error: %s", name, args, c.Text)
	}
	return c
}

func WantToolError(t *testing.T, cs *sdk.ClientSession, name string, args any, says string) {
	t.Helper()
	c := callTool(t, cs, name, args)
	if !c.isError || !strings.Contains(c.Text, says) {
		t.Fatalf("%s(%.200v) = error %v, %.300q; want a tool error saying %q", name, args, c.isError, c.Text, says)
	}
}

func ConnectStdio(t *testing.T, fx *Fixture, extraEnv ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(LoomBinary(t), "mcp")
	cmd.Dir = fx.Project
	cmd.Env = fx.BinEnv(extraEnv...)
	client := sdk.NewClient(&sdk.Implementation{Name: "loom-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to loom mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
