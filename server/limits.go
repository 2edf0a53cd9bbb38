package server

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/loomhq/loom"
)

// Defaults of the server's limits (Config).
const (
	defaultMaxStreamsPerUser = 8
	defaultMaxStreams        = 256
	defaultMaxTurnsPerUser   = 16
	defaultMaxTurns          = 64
	// An idle MCP session holds about 6 KiB of heap and a goroutine,
	// however many calls it has served; but every initialize makes one,
	// and it lives until closed or idle for MCPSessionIdle.
	defaultMaxMCPSessionsPerUser = 32
	defaultMaxMCPSessions        = 512
	defaultRequestTimeout        = 30 * time.Second
)

// retryAfter is what a refusal for a limit or a slow store tells the
// client to wait before trying again.
const retryAfter = 5 * time.Second

// limitOr is a configured limit: def when unset (0), none (0) when
// negative.
func limitOr(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// retryError is a refusal that passes: its answer carries Retry-After.
type retryError struct {
	err   error
	after time.Duration
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

func retryLater(err error) error { return &retryError{err: err, after: retryAfter} }

// refuse is a refusal of l's, with its Retry-After.
func (l *limiter) refuse(err error) error {
	if l.after > 0 {
		return &retryError{err: err, after: l.after}
	}
	return retryLater(err)
}

// setRetryAfter adds Retry-After to the answer of a refusal that passes.
func setRetryAfter(w http.ResponseWriter, err error) {
	var re *retryError
	if errors.As(err, &re) {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int((re.after+time.Second-1)/time.Second))))
	}
}

// limiter counts what runs at once, per user and over all users, and
// refuses more than its limits (0: no limit): 429 when the user has
// their share, 503 when the server is full.
type limiter struct {
	// what names what is counted, for the refusal: "event streams
	// open", "turns running".
	what    string
	perUser int
	total   int
	// after is the Retry-After of a refusal: retryAfter unless set.
	after time.Duration

	mu     sync.Mutex
	n      int
	byUser map[string]int
}

func newLimiter(what string, perUser, total int) *limiter {
	return &limiter{what: what, perUser: perUser, total: total, byUser: map[string]int{}}
}

// acquire takes a place for user; release gives it back (once, however
// often it is called).
func (l *limiter) acquire(user string) (release func(), err error) {
	return l.take(user, l.perUser)
}

// take is acquire with a limit per user of perUser (0: none).
func (l *limiter) take(user string, perUser int) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if perUser > 0 && l.byUser[user] >= perUser {
		return nil, l.refuse(codedError(eTooMany, "you have %d %s, the most one user may; retry when one has ended", l.byUser[user], l.what))
	}
	if l.total > 0 && l.n >= l.total {
		return nil, l.refuse(codedError(eUnavailable, "the server has %d %s, the most it takes; retry later", l.n, l.what))
	}
	l.n++
	l.byUser[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.n--
			if l.byUser[user]--; l.byUser[user] <= 0 {
				delete(l.byUser, user)
			}
		})
	}, nil
}

// pushLimit counts a hub's pushes of scope ("sync", "team") that run at
// once, per user and in this process. With locks (a store that hub
// processes share) a user's count is held there, over every process, so
// that a second process does not double it; the total, which bounds
// this process's memory, is this process's own either way.
type pushLimit struct {
	l     *limiter
	locks loom.HubLocks
	scope string
}

func newPushLimit(what, scope string, perUser, total int, locks loom.HubLocks) *pushLimit {
	l := newLimiter(what, perUser, total)
	// A push's place is free again within a second or so, the time to
	// store a batch: a machine refused comes back after one.
	l.after = time.Second
	return &pushLimit{l: l, locks: locks, scope: scope}
}

// acquire takes a place for one of user's pushes, as limiter.acquire
// does.
func (p *pushLimit) acquire(ctx context.Context, user string) (release func(), err error) {
	if p.locks == nil || p.l.perUser <= 0 {
		return p.l.acquire(user)
	}
	perUser := p.l.perUser
	mine, err := p.l.take(user, 0)
	if err != nil {
		return nil, err
	}
	held, ok, err := p.locks.TakePush(ctx, p.scope, user, perUser)
	switch {
	case err != nil:
		mine()
		return nil, retryLater(codedError(eUnavailable, "the hub cannot count your pushes: %v; retry later", err))
	case !ok:
		mine()
		return nil, p.l.refuse(codedError(eTooMany, "you have %d %s, the most one user may; retry when one has ended", perUser, p.l.what))
	}
	return func() { held(); mine() }, nil
}

// bounded returns ctx with the request timeout, for the store reads of
// one request (or of one step of a stream).
func (s *Server) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.cfg.RequestTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.cfg.RequestTimeout)
}

// withTimeout runs next with its request's context bounded by the
// request timeout.
func (s *Server) withTimeout(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := s.bounded(r.Context())
		defer cancel()
		next(w, r.WithContext(ctx))
	}
}

// timedOut turns the error of a request whose time ran out (a store
// read slower than the request timeout) into a 503 that says so, with
// Retry-After; other errors are returned as they are.
func (s *Server) timedOut(r *http.Request, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		s.log.Warn("request body not read within the read timeout", "method", r.Method, "path", r.URL.Path, "timeout", s.cfg.ReadTimeout)
		return retryLater(codedError(eUnavailable, "the request's body did not arrive within %s; retry later", s.cfg.ReadTimeout))
	}
	if err2 := s.timedOutIn(r.Context(), err); err2 != err {
		s.log.Warn("request timed out", "method", r.Method, "path", r.URL.Path, "timeout", s.cfg.RequestTimeout)
		return err2
	}
	return err
}

// timedOutIn is timedOut for an error of work done under ctx.
func (s *Server) timedOutIn(ctx context.Context, err error) error {
	var re *retryError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &re) {
		return err
	}
	return retryLater(codedError(eUnavailable, "the store did not answer within %s; retry later", s.cfg.RequestTimeout))
}
