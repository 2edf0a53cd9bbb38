// Command mcpserve is a stdio MCP server on the official Go SDK with one
// tool, search_sessions, answered from a loom SQLite store: the floor of
// loom mcp.
//
//	mcpserve DB USER
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite"
)

type searchArgs struct {
	Query       string `json:"query"`
	AllProjects bool   `json:"all_projects,omitempty"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mcpserve DB USER")
		os.Exit(2)
	}
	db, err := sql.Open("sqlite", "file:"+os.Args[1]+"?_pragma=busy_timeout(30000)&_pragma=query_only(1)&_pragma=cache_size(-16000)")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpserve:", err)
		os.Exit(1)
	}
	defer db.Close()
	user := os.Args[2]
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpserve", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "search_sessions", Description: "Full-text search over the sessions."},
		func(ctx context.Context, _ *mcp.CallToolRequest, args searchArgs) (*mcp.CallToolResult, any, error) {
			rs, err := db.QueryContext(ctx, `SELECT m.session_id, m.seq, snippet(bodies_fts, 0, '**', '**', '…', 24)
				FROM bodies_fts CROSS JOIN messages m ON m.body_id = bodies_fts.rowid CROSS JOIN sessions s ON s.id = m.session_id
				WHERE bodies_fts MATCH ? AND s.user_id = ? AND s.deleted_at IS NULL
				ORDER BY bodies_fts.rank LIMIT 20`, `"`+args.Query+`"`, user)
			if err != nil {
				return nil, nil, err
			}
			defer rs.Close()
			var b strings.Builder
			for rs.Next() {
				var sid, snip string
				var seq int64
				if err := rs.Scan(&sid, &seq, &snip); err != nil {
					return nil, nil, err
				}
				fmt.Fprintf(&b, "%s #%d: %s\n", sid, seq, snip)
			}
			if err := rs.Err(); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, nil, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcpserve:", err)
		os.Exit(1)
	}
}
