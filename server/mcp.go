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
// timeout. Each user has a bounded number of MCP sessions
// (Config.MaxMCPSessionsPerUser, MaxMCPSessions), refused past it as the
// event streams are, and an idle one ends after Config.MCPSessionIdle.
func (s *Server) mcpHandler(cfg mcp.Config) http.Handler {
	if cfg.Store == nil {
		cfg.Store = func(context.Context) (loom.Engine, error) { return s.st, nil }
	}
	if cfg.Logger == nil {
		cfg.Logger = s.log
	}
	h := mcp.HTTPHandler(cfg, func(ctx context.Context, token string) (string, error) {
		// The request's bearer token was authenticated below, just
		// before the MCP handler was called.
		if user, _ := ctx.Value(userKey{}).(string); user != "" {
			return user, nil
		}
		tok, err := s.tokens.Authenticate(ctx, token)
		switch {
		case err != nil:
			return "", err
		case tok.Scope == loom.ScopeShare:
			// A share-only token reads no session.
			return "", loom.TokenNotFound()
		}
		return tok.UserID, nil
	}, mcp.SessionLimits{
		PerUser: s.cfg.MaxMCPSessionsPerUser,
		Total:   s.cfg.MaxMCPSessions,
		Idle:    s.cfg.MCPSessionIdle,
		Refuse: func(w http.ResponseWriter, r *http.Request, err *mcp.SessionLimitError) {
			code := eTooMany
			if err.Full {
				code = eUnavailable
			}
			s.writeError(w, r, retryLater(codedError(code, "%s", err.Error())))
		},
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The token is checked here, as for the rest of the API, so a
		// request without a valid one gets the API's JSON error with
		// WWW-Authenticate, not the MCP library's plain text. Only the
		// header counts: the dashboard's cookie opens no MCP session.
		secret, ok := bearer(r)
		if r, ok = s.authorize(w, r, secret, ok); !ok {
			return
		}
		if r.Method == http.MethodGet {
			http.NewResponseController(w).SetWriteDeadline(time.Time{})
		}
		h.ServeHTTP(w, r)
	})
}
