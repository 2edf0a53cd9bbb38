package mcp

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom"
)

// Verify returns the user a bearer token belongs to; an error with code
// loom.ENOTFOUND means the token is unknown, revoked or expired.
type Verify func(ctx context.Context, token string) (user string, err error)

// DefaultSessionIdle is how long an HTTP client's MCP session lives
// without a request when SessionLimits.Idle is zero.
const DefaultSessionIdle = 5 * time.Minute

// SessionLimits bound the MCP sessions HTTPHandler keeps: every POST
// without an Mcp-Session-Id header opens one, so a client that starts
// over without closing its old session leaves it behind until it has
// been idle for Idle.
type SessionLimits struct {
	// PerUser bounds the sessions one user has open at once, Total
	// those of all users; 0: no limit.
	PerUser int
	Total   int
	// Idle closes a session that has had no request for that long
	// (default DefaultSessionIdle). A client of a closed session gets
	// 404 and initializes a new one.
	Idle time.Duration
	// Refuse answers a request that would open a session past a limit
	// (nil: a plain 429 or 503 with Retry-After).
	Refuse func(w http.ResponseWriter, r *http.Request, err *SessionLimitError)
}

// SessionLimitError is a new session refused for a limit.
type SessionLimitError struct {
	// Full is true when all users together have Total sessions, false
	// when the user has their PerUser share.
	Full bool
	// Open is the sessions the user (Full: the server) has open.
	Open int
}

func (e *SessionLimitError) Error() string {
	if e.Full {
		return fmt.Sprintf("the server has %d MCP sessions open, the most it takes; retry later", e.Open)
	}
	return fmt.Sprintf("you have %d MCP sessions open, the most one user may; close one (DELETE /mcp) or retry when an idle one has expired", e.Open)
}

// HTTPHandler serves the tools over streamable HTTP. Every request needs
// Authorization: Bearer TOKEN (401 without a valid one), and the tools
// read the token's user's sessions; a client session started with one
// user's token cannot be used with another's. cfg.User must be empty.
// New sessions past lim are refused before they are made.
func HTTPHandler(cfg Config, verify Verify, lim SessionLimits) http.Handler {
	cfg.User = ""
	if lim.Idle <= 0 {
		lim.Idle = DefaultSessionIdle
	}
	srv := NewServer(cfg)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Logger:         cfg.Logger,
		SessionTimeout: lim.Idle,
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
	if lim.PerUser > 0 || lim.Total > 0 {
		h2 := &sessionGate{next: h, live: srv.Sessions, lim: lim, owner: map[string]string{}, byUser: map[string]int{}, pending: map[string]int{}}
		return auth.RequireBearerToken(verifier, nil)(h2)
	}
	return auth.RequireBearerToken(verifier, nil)(h)
}

// sessionIDHeader names a client's session in MCP's streamable HTTP.
const sessionIDHeader = "Mcp-Session-Id"

// sessionGate counts the sessions of each user and refuses a request
// that would open one past the limits. It learns a new session's owner
// from the Mcp-Session-Id of the answer to the request that opened it,
// and forgets the sessions the server no longer has (closed by DELETE,
// expired, or a failed initialize) when a count reaches a limit.
type sessionGate struct {
	next http.Handler
	live func() iter.Seq[*sdk.ServerSession]
	lim  SessionLimits

	mu sync.Mutex
	// owner is the user of each session made here, byUser the count of
	// each user's; pending counts the requests opening a session now.
	owner    map[string]string
	byUser   map[string]int
	pending  map[string]int
	npending int
	// pruneAt is the size of owner at which it is pruned even below
	// the limits (users without a per-user limit, or many users).
	pruneAt int
}

func (g *sessionGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var user string
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		user = ti.UserID
	}
	if id := r.Header.Get(sessionIDHeader); id != "" || r.Method != http.MethodPost {
		g.next.ServeHTTP(w, r)
		if r.Method == http.MethodDelete {
			// The session is closed, or was already gone: the server
			// lists it a little longer, until it has wound down.
			g.forget(user, id)
		}
		return
	}
	if err := g.reserve(user); err != nil {
		if g.lim.Refuse != nil {
			g.lim.Refuse(w, r, err)
			return
		}
		w.Header().Set("Retry-After", "5")
		code := http.StatusTooManyRequests
		if err.Full {
			code = http.StatusServiceUnavailable
		}
		http.Error(w, err.Error(), code)
		return
	}
	// The reservation ends as the answer starts: its client may send
	// its next request before this handler has returned.
	sw := &settleWriter{ResponseWriter: w, settle: func() { g.settle(user, w.Header().Get(sessionIDHeader)) }}
	defer sw.done()
	g.next.ServeHTTP(sw, r)
}

// settleWriter calls settle once, when the answer's header is written
// or, failing that, when done is called.
type settleWriter struct {
	http.ResponseWriter
	settle  func()
	settled bool
}

func (w *settleWriter) done() {
	if !w.settled {
		w.settled = true
		w.settle()
	}
}

func (w *settleWriter) WriteHeader(code int) {
	w.done()
	w.ResponseWriter.WriteHeader(code)
}

func (w *settleWriter) Write(b []byte) (int, error) {
	w.done()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush the answer's stream.
func (w *settleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// reserve takes a place for a session of user, or says which limit is
// reached.
func (g *sessionGate) reserve(user string) *SessionLimitError {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.over(user) != nil || len(g.owner) >= g.pruneAt {
		g.prune()
		g.pruneAt = max(64, 2*len(g.owner))
		if err := g.over(user); err != nil {
			return err
		}
	}
	g.pending[user]++
	g.npending++
	return nil
}

func (g *sessionGate) over(user string) *SessionLimitError {
	if n := g.byUser[user] + g.pending[user]; g.lim.PerUser > 0 && n >= g.lim.PerUser {
		return &SessionLimitError{Open: n}
	}
	if n := len(g.owner) + g.npending; g.lim.Total > 0 && n >= g.lim.Total {
		return &SessionLimitError{Full: true, Open: n}
	}
	return nil
}

// settle ends a reservation: id, when not empty, is the session the
// request opened.
func (g *sessionGate) settle(user, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending[user]--; g.pending[user] <= 0 {
		delete(g.pending, user)
	}
	g.npending--
	if _, ok := g.owner[id]; id != "" && !ok {
		g.owner[id] = user
		g.byUser[user]++
	}
}

// forget drops user's session id, closed.
func (g *sessionGate) forget(user, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if u, ok := g.owner[id]; ok && u == user {
		g.drop(id, user)
	}
}

func (g *sessionGate) drop(id, user string) {
	delete(g.owner, id)
	if g.byUser[user]--; g.byUser[user] <= 0 {
		delete(g.byUser, user)
	}
}

// prune forgets the sessions the server no longer has.
func (g *sessionGate) prune() {
	live := make(map[string]bool, len(g.owner))
	for ss := range g.live() {
		live[ss.ID()] = true
	}
	for id, user := range g.owner {
		if !live[id] {
			g.drop(id, user)
		}
	}
}
