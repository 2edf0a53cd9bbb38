// Package server is loom's HTTP edge: a JSON API under /api/v1 and a web
// dashboard at /, over one store. Every API call is authenticated by a
// bearer token that maps to one user, and a user never reaches another
// user's sessions (they answer 404, as if they did not exist). Store
// error codes are turned into HTTP statuses in one place (errors.go).
//
// POST /api/v1/messages runs one agent turn and streams it back as
// Server-Sent Events: the entry point for chat-surface adapters. The
// dashboard is server-rendered HTML with a few lines of plain JavaScript
// for live updates; its assets are embedded.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/mcp"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/semantic"
)

// Config is what a Server needs. Store and Tokens are required. The
// store's services serve the rest: sync's records and the edit index of
// the blame page, which every engine has (loom.Engine), and the hub's
// locks and teams and shares, which it may lack (loom.Optional); an
// endpoint whose optional service the store lacks answers 404 or says
// so.
type Config struct {
	Store  loom.Engine
	Tokens loom.TokenStore
	// Agent opens the conversations that POST /api/v1/messages runs
	// turns in. Nil, or an agent.UnavailableError from it, makes that
	// endpoint answer 503.
	Agent Conversations
	// MCP, when set, serves loom's MCP tools at /mcp (streamable HTTP)
	// to the holders of bearer tokens, each over its own sessions; its
	// User is ignored.
	MCP *mcp.Config
	// Blame, when set, offers the blame page (/blame) and GET
	// /api/v1/blame, which read files of this machine's git
	// repositories: to Blame.Owner alone, and only files under the
	// roots of projects their sessions worked in.
	Blame *BlameConfig
	// HubKey, when set, seals the checkpoints of teams' chains the hub
	// keeps in Store (hub.Edge.CheckpointKey); kept outside Store.
	HubKey []byte
	// Team, when set, is the team whose store Store is (loom serve
	// --team): the dashboard has a team page, and usage splits by member.
	Team *TeamConfig
	// Searcher runs GET /api/v1/search and the dashboard's search (nil:
	// one that ranks Store's hits by keywords).
	Searcher *semantic.Searcher
	// Logger receives access logs and internal errors (default: discard).
	Logger *slog.Logger
	// Prices prices usage reports (nil: MCP's Prices, or the bundled
	// table).
	Prices *pricing.Table

	// PollInterval is how often a live tail reads the store for new
	// messages (default 250ms).
	PollInterval time.Duration
	// KeepAlive is how often an idle event stream gets a comment line,
	// so that proxies keep it open (default 15s).
	KeepAlive time.Duration
	// MaxBodyBytes bounds request bodies (default 1 MiB).
	MaxBodyBytes int64
	// Timeouts of the http.Server that HTTPServer builds and of
	// responses that are not event streams. Zero values take defaults:
	// ReadHeaderTimeout 10s, ReadTimeout 30s, WriteTimeout 60s,
	// IdleTimeout 120s.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration

	// RequestTimeout bounds the store reads of a request (default 30s),
	// of every API call and dashboard page but the event streams and
	// turns, and of each poll of an event stream: a store slower than
	// that answers 503 with Retry-After instead of holding the request.
	// Negative: no bound.
	RequestTimeout time.Duration
	// MaxStreamsPerUser bounds the event streams (GET
	// /api/v1/sessions/{id}/events, which the dashboard's live views
	// use) one user has open at once (default 8): past it, 429 with
	// Retry-After. MaxStreams bounds them over all users (default 256):
	// past it, 503 with Retry-After. Negative: no limit.
	MaxStreamsPerUser int
	MaxStreams        int
	// MaxTurnsPerUser bounds the turns (POST /api/v1/messages) one user
	// runs at once (default 16: a chat-surface bot runs the turns of all
	// its chats under one token), MaxTurns those of all users (default
	// 64), refused as the streams are. Negative: no limit.
	MaxTurnsPerUser int
	MaxTurns        int
	// MaxMCPSessionsPerUser bounds the MCP sessions at /mcp one user has
	// open at once (default 32): an initialize past it is refused with
	// 429 and Retry-After. MaxMCPSessions bounds them over all users
	// (default 512): past it, 503 with Retry-After. Negative: no limit.
	// MCPSessionIdle closes a session without a request for that long
	// (default 5m); its client gets 404 and initializes again.
	MaxMCPSessionsPerUser int
	MaxMCPSessions        int
	MCPSessionIdle        time.Duration
}

// Server serves the API and the dashboard. It is an http.Handler.
type Server struct {
	cfg      Config
	st       loom.Engine
	svc      loom.Optional
	searcher *semantic.Searcher
	tokens   loom.TokenStore
	log      *slog.Logger
	handler  http.Handler
	// patterns are the routes' patterns (Routes).
	patterns []string
	pages    *pages
	// csrf rejects state-changing requests that a browser sends on
	// behalf of another site (by Sec-Fetch-Site, else Origin against
	// Host). The cookie being SameSite=Strict already keeps it off such
	// requests; this is the second lock.
	csrf *http.CrossOriginProtection

	// closing is closed when shutdown begins: live tails end and new
	// turns are refused.
	closing   chan struct{}
	closeOnce sync.Once

	// Turns run on turnCtx, not on their request's context: a client
	// that goes away does not cut a turn short; shutdown does, after a
	// grace period, by cancelling turnCtx.
	turnCtx     context.Context
	cancelTurns context.CancelFunc
	mu          sync.Mutex
	draining    bool
	turns       sync.WaitGroup
	// busy holds the user and key of every turn running here: the store's
	// lock keeps other processes out, busy keeps this one to one turn per
	// session.
	busy map[string]bool
	// streams and turnLimit count the event streams open and the turns
	// running, per user and overall.
	streams   *limiter
	turnLimit *limiter
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 250 * time.Millisecond
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = 10 * time.Second
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 30 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 60 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 120 * time.Second
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = defaultRequestTimeout
	}
	cfg.MaxStreamsPerUser = limitOr(cfg.MaxStreamsPerUser, defaultMaxStreamsPerUser)
	cfg.MaxStreams = limitOr(cfg.MaxStreams, defaultMaxStreams)
	cfg.MaxTurnsPerUser = limitOr(cfg.MaxTurnsPerUser, defaultMaxTurnsPerUser)
	cfg.MaxTurns = limitOr(cfg.MaxTurns, defaultMaxTurns)
	cfg.MaxMCPSessionsPerUser = limitOr(cfg.MaxMCPSessionsPerUser, defaultMaxMCPSessionsPerUser)
	cfg.MaxMCPSessions = limitOr(cfg.MaxMCPSessions, defaultMaxMCPSessions)
	if cfg.MCPSessionIdle <= 0 {
		cfg.MCPSessionIdle = mcp.DefaultSessionIdle
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:       cfg,
		st:        cfg.Store,
		searcher:  cfg.Searcher,
		tokens:    cfg.Tokens,
		log:       log,
		closing:   make(chan struct{}),
		busy:      map[string]bool{},
		streams:   newLimiter("event streams open", cfg.MaxStreamsPerUser, cfg.MaxStreams),
		turnLimit: newLimiter("turns running", cfg.MaxTurnsPerUser, cfg.MaxTurns),
	}
	if cfg.Store != nil {
		s.svc = cfg.Store.Optional()
	}
	s.turnCtx, s.cancelTurns = context.WithCancel(context.Background())
	s.pages = newPages()
	s.csrf = http.NewCrossOriginProtection()
	s.handler = s.routes()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// HTTPServer returns an http.Server for addr that serves s with its
// timeouts. It has no WriteTimeout: event streams live long, so the
// other responses get their write deadline per request instead.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Serve accepts connections on ln until ctx is done, then shuts down:
// live tails end at once, turns in flight get grace to finish and are
// then cancelled, which cuts them at a whole-message boundary (what was
// stored stays, nothing partial is written).
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	hs := s.HTTPServer(ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	turnsCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(turnsCtx) }()
	// Handlers end once their turns have; allow for the cut turns to
	// reach their boundary.
	hctx, hcancel := context.WithTimeout(context.Background(), grace+15*time.Second)
	defer hcancel()
	err := hs.Shutdown(hctx)
	if serr := <-shut; serr != nil && err == nil && !errors.Is(serr, context.DeadlineExceeded) {
		err = serr
	}
	if e := <-errc; e != nil && !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

// Shutdown ends live tails, refuses new turns, and waits for the turns in
// flight until ctx is done; then it cancels them and waits until they
// have stopped. It returns ctx's error when turns had to be cut.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.closing) })
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.turns.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.log.Warn("shutdown: cancelling turns still running")
	s.cancelTurns()
	<-done
	return ctx.Err()
}

// beginTurn reserves the user's key for one turn; false when a turn with
// that key runs here already or the server is shutting down.
func (s *Server) beginTurn(user, key string) (ok, draining bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return false, true
	}
	k := user + "\x00" + key
	if s.busy[k] {
		return false, false
	}
	s.busy[k] = true
	s.turns.Add(1)
	return true, false
}

func (s *Server) endTurn(user, key string) {
	s.mu.Lock()
	delete(s.busy, user+"\x00"+key)
	s.mu.Unlock()
	s.turns.Done()
}
