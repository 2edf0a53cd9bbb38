// Package providertest is what the fake model servers of loom's
// providers (openai/openaitest, anthropic/anthropictest) are built on,
// and the contract tests every provider passes against its fake server.
//
// A fake server is a Server, scripted with a queue of the protocol's
// replies, recording every request, and releasing hanging responses when
// it closes. It answers each request with the protocol's own Handler,
// which takes its reply from the Exchange, writes JSON with WriteJSON and
// streams with the Exchange's Events. Run runs the
// contract tests (streaming, tool calls, retries, errors in one line,
// cancellation) against a provider described by a Suite.
package providertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"
)

// Request is one request a fake server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the decoded JSON body, nil when the body is not JSON.
	Body map[string]any
	// Raw is the body as sent.
	Raw []byte
}

// ToolCall is a tool call a scripted reply makes.
type ToolCall struct {
	// ID defaults to an id the server makes up.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Args is the JSON text of the arguments, streamed in pieces.
	Args string `json:"args,omitempty"`
}

// Handler answers a request with the protocol's response; x is the
// request as the Server recorded it, and what the handler may ask of the
// Server while it answers.
type Handler[R any] func(w http.ResponseWriter, r *http.Request, x *Exchange[R])

// Server is the part of a fake server that does not depend on the
// protocol: it records every request, hands out scripted replies of type
// R in order, and releases hanging responses when it closes. It is safe
// for concurrent use.
type Server[R any] struct {
	*httptest.Server

	mu       sync.Mutex
	queue    []R
	respond  func(Request) (R, bool)
	requests []Request
	taken    int
	answered []Answered[R]

	done      chan struct{}
	closeOnce sync.Once
}

// NewServer starts a server on a loopback port that records each request
// and passes it to h. Close it when done.
func NewServer[R any](h Handler[R]) *Server[R] {
	s := &Server[R]{done: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, n, ok := s.record(r)
		if ok {
			h(w, r, &Exchange[R]{Req: req, N: n, s: s, w: w, r: r})
		}
	}))
	return s
}

func (s *Server[R]) record(r *http.Request) (Request, int, bool) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return Request{}, 0, false
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
	if len(raw) > 0 {
		var body map[string]any
		if json.Unmarshal(raw, &body) == nil {
			req.Body = body
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	return req, len(s.requests), true
}

// Enqueue adds replies to the end of the script.
func (s *Server[R]) Enqueue(replies ...R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Respond makes f answer the requests it wants to (ok true) before
// the script is consulted: for a client whose requests do not come in an
// order a queue can follow (an agent whose sub-agents call the model
// while it does). f runs with the server locked: it must not call it.
func (s *Server[R]) Respond(f func(req Request) (reply R, ok bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = f
}

// Queued returns how many scripted replies are still waiting.
func (s *Server[R]) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Answered is a request the server answered with a reply of its
// script, or (Fallback) with the one it makes when the script has none.
type Answered[R any] struct {
	Request  Request
	Reply    R
	Fallback bool
}

// Answered returns every request answered with a reply so far, oldest
// first: what a client was told, to compare with what it kept.
func (s *Server[R]) Answered() []Answered[R] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.answered)
}

// Requests returns every request received so far, oldest first.
func (s *Server[R]) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Close releases hanging responses, then shuts the server down.
func (s *Server[R]) Close() {
	s.closeOnce.Do(func() { close(s.done) })
	s.Server.Close()
}

// Exchange is one request a Server received, being answered by its
// protocol's handler.
type Exchange[R any] struct {
	// Req is the request as recorded.
	Req Request
	// N counts the requests the server has received, this one included.
	N int

	s *Server[R]
	w http.ResponseWriter
	r *http.Request
}

// Take returns the next scripted reply, or the one fallback makes when
// the script is used up, and how many replies the server has handed out,
// this one included.
func (x *Exchange[R]) Take(fallback func() R) (R, int) {
	s := x.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var reply R
	if s.respond != nil {
		if r, ok := s.respond(x.Req); ok {
			s.taken++
			s.answered = append(s.answered, Answered[R]{Request: x.Req, Reply: r})
			return r, s.taken
		}
	}
	fell := false
	if len(s.queue) > 0 {
		reply = s.queue[0]
		s.queue = s.queue[1:]
	} else {
		reply, fell = fallback(), true
	}
	s.taken++
	s.answered = append(s.answered, Answered[R]{Request: x.Req, Reply: reply, Fallback: fell})
	return reply, s.taken
}

// wait sleeps d unless the client goes away or the server closes first,
// and reports whether the response may go on.
func (x *Exchange[R]) wait(d time.Duration) bool {
	if d <= 0 {
		return x.r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-x.r.Context().Done():
	case <-x.s.done:
	}
	return false
}

// Hang blocks until the client goes away or the server closes.
func (x *Exchange[R]) Hang() {
	select {
	case <-x.r.Context().Done():
	case <-x.s.done:
	}
}
