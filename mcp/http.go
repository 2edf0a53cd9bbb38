package mcp

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom"
)

// Verify returns the user a bearer token belongs to; an error with code
// loom.ENOTFOUND means the token is unknown, revoked or expired.
type Verify func(ctx context.Context, token string) (user string, err error)

// sessionIdle is how long an HTTP client's MCP session lives without a
// request.
const sessionIdle = 30 * time.Minute

// HTTPHandler serves the tools over streamable HTTP. Every request needs
// Authorization: Bearer TOKEN (401 without a valid one), and the tools
// read the token's user's sessions; a client session started with one
// user's token cannot be used with another's. cfg.User must be empty.
func HTTPHandler(cfg Config, verify Verify) http.Handler {
	cfg.User = ""
	srv := NewServer(cfg)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Logger:         cfg.Logger,
		SessionTimeout: sessionIdle,
		// Each request's tools stop when its client goes away.
		PropagateRequestCancellation: true,
	})
	verifier := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		user, err := verify(ctx, token)
		if loom.ErrorCode(err) == loom.ENOTFOUND || (err == nil && user == "") {
			return nil, fmt.Errorf("%w: unknown, revoked or expired token", auth.ErrInvalidToken)
		}
		if err != nil {
			return nil, err
		}
		// loom's tokens expire in the store, which verify consults on
		// every request; the SDK wants an expiry all the same.
		return &auth.TokenInfo{UserID: user, Expiration: time.Now().Add(time.Hour)}, nil
	}
	return auth.RequireBearerToken(verifier, nil)(h)
}
