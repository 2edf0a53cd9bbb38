package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom/mcp"
	"github.com/loomhq/loom/server"
)

// withMCP serves the MCP tools at /mcp with these session limits.
func withMCP(perUser, total int, idle time.Duration) envOption {
	return func(c *server.Config) {
		c.MCP = &mcp.Config{}
		c.MaxMCPSessionsPerUser, c.MaxMCPSessions, c.MCPSessionIdle = perUser, total, idle
	}
}

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"loom-test","version":"1"}}}`

// mcpPost posts a JSON-RPC message to /mcp as a streamable HTTP client
// does, in session sid (none when empty).
func (e *env) mcpPost(token, sid, body string) (*http.Response, []byte) {
	e.t.Helper()
	h := http.Header{"Accept": {"application/json, text/event-stream"}}
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
		h.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp := e.send(http.MethodPost, "/mcp", token, body, h)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("POST /mcp: read body: %v", err)
	}
	return resp, b
}

// mcpOpen initializes a session and returns its id; status is the
// answer's when it is not 200.
func (e *env) mcpOpen(token string) (sid string, resp *http.Response, body []byte) {
	e.t.Helper()
	resp, body = e.mcpPost(token, "", mcpInitialize)
	if resp.StatusCode == http.StatusOK {
		sid = resp.Header.Get("Mcp-Session-Id")
		if sid == "" {
			e.t.Fatalf("initialize: no Mcp-Session-Id: %s", body)
		}
	}
	return sid, resp, body
}

func (e *env) mcpMustOpen(token string) string {
	e.t.Helper()
	sid, resp, body := e.mcpOpen(token)
	if sid == "" {
		e.t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	return sid
}

func (e *env) mcpClose(token, sid string) {
	e.t.Helper()
	h := http.Header{"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-06-18"}}
	resp := e.send(http.MethodDelete, "/mcp", token, nil, h)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		e.t.Fatalf("DELETE session: %d", resp.StatusCode)
	}
}

// wantRefused checks a refused initialize: status, Retry-After, and the
// API's JSON error with code.
func wantRefused(t *testing.T, what string, resp *http.Response, body []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s: %d %s, want %d", what, resp.StatusCode, body, status)
	}
	wantRetryAfter(t, what, resp)
	var eb struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code != code || eb.Error.Message == "" {
		t.Fatalf("%s: body %s, want the JSON error %q", what, body, code)
	}
}

// Sessions past a user's share are refused with 429, past the server's
// with 503, both with Retry-After; another user still gets in, sessions
// open keep working, and a closed session frees its place.
func TestMCPSessionLimits(t *testing.T) {
	e := newEnv(t, withMCP(3, 5, 0))
	var alice []string
	for range 3 {
		alice = append(alice, e.mcpMustOpen(e.alice))
	}
	_, resp, body := e.mcpOpen(e.alice)
	wantRefused(t, "alice's 4th session", resp, body, http.StatusTooManyRequests, "too_many_requests")

	// Alice's sessions still answer.
	if resp, body := e.mcpPost(e.alice, alice[0], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/list in an open session: %d %s", resp.StatusCode, body)
	}

	bob := []string{e.mcpMustOpen(e.bob), e.mcpMustOpen(e.bob)}
	_, resp, body = e.mcpOpen(e.bob)
	wantRefused(t, "the 6th session", resp, body, http.StatusServiceUnavailable, "unavailable")

	// Closing one of alice's frees a place for anyone.
	e.mcpClose(e.alice, alice[0])
	bob = append(bob, e.mcpMustOpen(e.bob))
	_, resp, body = e.mcpOpen(e.bob)
	wantRefused(t, "bob's 4th session", resp, body, http.StatusTooManyRequests, "too_many_requests")
	e.mcpClose(e.bob, bob[0])
	e.mcpMustOpen(e.alice)
}

// An idle session expires and frees its place; its client gets 404 and
// may initialize again.
func TestMCPSessionIdle(t *testing.T) {
	e := newEnv(t, withMCP(1, -1, 100*time.Millisecond))
	sid := e.mcpMustOpen(e.alice)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := e.mcpPost(e.alice, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("idle session still answers: %d %s", resp.StatusCode, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.mcpMustOpen(e.alice)
}

// The SDK's own client is refused past the limit, and a client that
// closes its session frees it.
func TestMCPSessionLimitClient(t *testing.T) {
	e := newEnv(t, withMCP(1, 0, 0))
	connect := func() (*sdk.ClientSession, error) {
		hc := &http.Client{Transport: bearer{e.alice}}
		return sdk.NewClient(&sdk.Implementation{Name: "loom-test", Version: "1"}, nil).
			Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.ts.URL + "/mcp", HTTPClient: hc}, nil)
	}
	cs, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if cs2, err := connect(); err == nil {
		cs2.Close()
		t.Fatal("a 2nd session past the limit of 1 was opened")
	}
	cs.Close()
	cs, err = connect()
	if err != nil {
		t.Fatalf("after closing the first session: %v", err)
	}
	cs.Close()
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// Thousands of sessions opened and closed, initializes refused, and
// sessions left behind that expire keep the heap flat.
func TestMCPSessionsMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of requests")
	}
	// No access log: the test's keeps every line. The idle time is long
	// enough that alice's session, used at once, never expires between
	// its requests on a busy machine, and short enough that bob's expire
	// during the rounds.
	e := newEnv(t, withMCP(4, 8, time.Second), func(c *server.Config) { c.Logger = slog.New(slog.DiscardHandler) })
	round := func(n int) {
		for range n {
			sid := e.mcpMustOpen(e.alice)
			if resp, body := e.mcpPost(e.alice, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_sessions","arguments":{"query":"nothing here"}}}`); resp.StatusCode != http.StatusOK {
				t.Fatalf("search: %d %s", resp.StatusCode, body)
			}
			e.mcpClose(e.alice, sid)
			// Left behind: these expire.
			for range 3 {
				if _, resp, body := e.mcpOpen(e.bob); resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusTooManyRequests {
					t.Fatalf("bob's initialize: %d %s", resp.StatusCode, body)
				}
			}
		}
	}
	heap := func() uint64 {
		// The left-behind sessions have expired once bob has all his
		// places again: wait for that, then give them back.
		var sids []string
		for len(sids) < 4 {
			sid, resp, body := e.mcpOpen(e.bob)
			switch {
			case sid != "":
				sids = append(sids, sid)
			case resp.StatusCode == http.StatusTooManyRequests:
				for _, sid := range sids {
					e.mcpClose(e.bob, sid)
				}
				sids = sids[:0]
				time.Sleep(50 * time.Millisecond) // poll: expiry has no event to wait on
			default:
				t.Fatalf("bob's initialize: %d %s", resp.StatusCode, body)
			}
		}
		for _, sid := range sids {
			e.mcpClose(e.bob, sid)
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	round(300)
	before := heap()
	round(1500)
	after := heap()
	t.Logf("heap after 300 rounds %d KiB, after 1,800 %d KiB", before>>10, after>>10)
	if after > before+1<<20 {
		t.Fatalf("heap grew from %d to %d KiB over 1,500 rounds of sessions", before>>10, after>>10)
	}
}

// Initializes at once from one user take exactly the user's places, not
// more: a session is counted from its request's start.
func TestMCPSessionLimitConcurrent(t *testing.T) {
	e := newEnv(t, withMCP(5, 0, 0))
	codes := make(chan int, 40)
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, e.ts.URL+"/mcp", strings.NewReader(mcpInitialize))
			req.Header.Set("Authorization", "Bearer "+e.alice)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	n := map[int]int{}
	for c := range codes {
		n[c]++
	}
	if n[http.StatusOK] != 5 || n[http.StatusTooManyRequests] != 35 {
		t.Fatalf("40 initializes at once with a limit of 5: %v", n)
	}
}
