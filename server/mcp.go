package server

import (
	"context"
	"net/http"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/mcp"
)

// mcpHandler serves loom's MCP tools at /mcp behind the API's bearer
// tokens: each token's user searches and reads only their own sessions.
// A client's standing event stream (GET) lives past the write deadline
// other responses get; each tool call is bounded by the tools' own
// timeout.
func (s *Server) mcpHandler(cfg mcp.Config) http.Handler {
	if cfg.Store == nil {
		cfg.Store = func(context.Context) (loom.Store, error) { return s.st, nil }
	}
	if cfg.Logger == nil {
		cfg.Logger = s.log
	}
	h := mcp.HTTPHandler(cfg, func(ctx context.Context, token string) (string, error) {
		tok, err := s.tokens.Authenticate(ctx, token)
		if err != nil {
			return "", err
		}
		return tok.UserID, nil
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.NewResponseController(w).SetWriteDeadline(time.Time{})
		}
		h.ServeHTTP(w, r)
	})
}
