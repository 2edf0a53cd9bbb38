package main

import (
	"context"
	"errors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/mcp"
)

// mcpClient is a client of loom's MCP tools over st, in this process:
// the figure is the tool's whole call (decoding the arguments, the
// search, the text and structured result, and their JSON-RPC encoding)
// without a pipe's or a network's latency.
type mcpClient struct {
	cs *sdk.ClientSession
	ss *sdk.ServerSession
}

func newMCPClient(ctx context.Context, st loom.Engine, user string) (*mcpClient, error) {
	srv := mcp.NewServer(mcp.Config{Store: func(context.Context) (loom.Engine, error) { return st, nil }, User: user})
	ct, stt := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, stt, nil)
	if err != nil {
		return nil, err
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "loom-bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		return nil, err
	}
	return &mcpClient{cs: cs, ss: ss}, nil
}

// search calls search_sessions over every project and wants hits.
func (c *mcpClient) search(ctx context.Context, query string) error {
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_sessions", Arguments: map[string]any{"query": query, "all_projects": true}})
	if err != nil {
		return err
	}
	if res.IsError {
		return errors.New("search_sessions: tool error")
	}
	hits, _ := res.StructuredContent.(map[string]any)["hits"].([]any)
	if len(hits) == 0 {
		return errors.New("search_sessions: no hits")
	}
	return nil
}

func (c *mcpClient) Close() {
	c.cs.Close()
	c.ss.Close()
}
