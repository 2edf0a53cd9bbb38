package server_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/server"
)

// wantRetryAfter checks that a refusal says when to come back.
func wantRetryAfter(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("%s: Retry-After %q, want a number of seconds", what, resp.Header.Get("Retry-After"))
	}
}

// openStream opens an event stream and waits for its ready event.
func (e *env) openStream(id, token string) (*http.Response, <-chan sseEvent) {
	e.t.Helper()
	resp := e.send("GET", "/api/v1/sessions/"+id+"/events", token, nil, nil)
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.t.Fatalf("open stream: %d %s", resp.StatusCode, b)
	}
	evs := readEvents(resp.Body)
	for ev := range evs {
		if ev.Event == "ready" {
			return resp, evs
		}
	}
	e.t.Fatal("stream ended before ready")
	return nil, nil
}

// Event streams are capped per user (429) and overall (503), each refusal
// with Retry-After and the usual JSON error; a closed stream frees its
// place.
func TestEventStreamLimits(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.MaxStreamsPerUser = 2
		c.MaxStreams = 3
	})
	a := e.seed(&loom.Session{UserID: "alice", Key: "http:a"}, userMsg("one"))
	b := e.seed(&loom.Session{UserID: "bob", Key: "http:b"}, userMsg("one"))
	path := func(id string) string { return "/api/v1/sessions/" + id + "/events" }

	first, _ := e.openStream(a.ID, e.alice)
	second, _ := e.openStream(a.ID, e.alice)
	defer second.Body.Close()
	resp, body := e.request("GET", path(a.ID), e.alice, nil)
	wantError(t, "a third stream of one user", resp, body, http.StatusTooManyRequests, "too_many_requests")
	wantRetryAfter(t, "a third stream of one user", resp)

	third, _ := e.openStream(b.ID, e.bob)
	defer third.Body.Close()
	resp, body = e.request("GET", path(b.ID), e.bob, nil)
	wantError(t, "a stream past the server's limit", resp, body, http.StatusServiceUnavailable, "unavailable")
	wantRetryAfter(t, "a stream past the server's limit", resp)

	first.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp := e.send("GET", path(a.ID), e.alice, nil, nil)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream did not free its place: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Turns are capped per user (429) and overall (503).
func TestTurnLimits(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.MaxTurnsPerUser = 1
		c.MaxTurns = 2
	})
	_, carol, err := e.st.CreateToken(context.Background(), "carol", "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	slow := openaitest.Reply{Text: strings.Repeat("slow ", 40), Delay: 25 * time.Millisecond}
	e.fake.Enqueue(slow, slow)
	start := func(token, key string) *http.Response {
		resp := e.send("POST", "/api/v1/messages", token, map[string]string{"key": key, "text": "hi"}, nil)
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("turn: %d %s", resp.StatusCode, b)
		}
		if ev := next(t, readEvents(resp.Body), 5*time.Second); ev.Event != "start" {
			t.Fatalf("first event %+v", ev)
		}
		return resp
	}
	r1 := start(e.alice, "discord:1")
	defer r1.Body.Close()
	resp, body := e.request("POST", "/api/v1/messages", e.alice, `{"key":"discord:2","text":"hi"}`)
	wantError(t, "a second turn of one user", resp, body, http.StatusTooManyRequests, "too_many_requests")
	wantRetryAfter(t, "a second turn of one user", resp)

	r2 := start(e.bob, "discord:3")
	defer r2.Body.Close()
	resp, body = e.request("POST", "/api/v1/messages", carol, `{"key":"discord:4","text":"hi"}`)
	wantError(t, "a turn past the server's limit", resp, body, http.StatusServiceUnavailable, "unavailable")
	wantRetryAfter(t, "a turn past the server's limit", resp)
}

// slowStore is a store whose session listing takes as long as its
// caller lets it.
type slowStore struct{ loom.Engine }

func (s slowStore) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Minute):
		return s.Engine.Sessions(ctx, f)
	}
}

// A slow store read ends with 503 and Retry-After when the request's time
// is up, on the API and the dashboard; event streams are not cut by it.
func TestSlowReadTimesOut(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.Store = slowStore{c.Store}
		c.RequestTimeout = 200 * time.Millisecond
		c.KeepAlive = 50 * time.Millisecond
	})
	began := time.Now()
	resp, body := e.request("GET", "/api/v1/sessions", e.alice, nil)
	wantError(t, "a slow read", resp, body, http.StatusServiceUnavailable, "unavailable")
	wantRetryAfter(t, "a slow read", resp)
	if d := time.Since(began); d > 10*time.Second {
		t.Fatalf("the slow read held the request for %s", d)
	}
	page := e.send("GET", "/", "", nil, http.Header{"Cookie": {"loom_token=" + e.alice}})
	page.Body.Close()
	if page.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("dashboard on a slow store: %d, want 503", page.StatusCode)
	}
	wantRetryAfter(t, "dashboard on a slow store", page)

	s := e.seed(&loom.Session{UserID: "alice", Key: "http:tail"}, userMsg("one"))
	stream, evs := e.openStream(s.ID, e.alice)
	defer stream.Body.Close()
	idleFor(t, evs, 3*200*time.Millisecond)
	x, _ := e.st.Session(context.Background(), s.ID)
	if err := e.st.Append(context.Background(), x, assistantMsg("two")); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, evs, 5*time.Second); ev.Event != "message" || ev.ID != "2" {
		t.Fatalf("stream after the request timeout: %+v", ev)
	}
}
