package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/internal/testkit/syncio"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/sqlite"
)

// env is a listening server over a real SQLite store, with the fake
// OpenAI server behind its agent, and tokens for alice and bob.
type env struct {
	t      *testing.T
	dbPath string
	st     *sqlite.Store
	srv    *server.Server
	ts     *httptest.Server
	fake   *openaitest.Server
	alice  string
	bob    string
	aliceT *loom.Token
	logs   *syncio.Buffer
}

type envOption func(*server.Config)

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t, dbPath: filepath.Join(t.TempDir(), "sessions.db"), logs: &syncio.Buffer{}}
	var err error
	e.st, err = sqlite.Open(context.Background(), e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.st.Close() })
	e.fake = openaitest.NewServer()
	t.Cleanup(e.fake.Close)
	prov := openai.New(openai.Config{BaseURL: e.fake.BaseURL(), APIKey: "test", MaxRetries: -1})
	cfg := server.Config{
		Store:  e.st,
		Tokens: e.st,
		Agent: &agent.Service{Store: e.st, Build: func(ctx context.Context, st loom.Store, s *loom.Session, _ agent.Choice) (*agent.Loop, error) {
			l := agent.NewLoop(st, prov, "gpt-4o-mini")
			s.Model, s.Provider = l.Model, prov.Name()
			return l, nil
		}},
		Logger:       slog.New(slog.NewJSONHandler(e.logs, nil)),
		PollInterval: 20 * time.Millisecond,
	}
	for _, o := range opts {
		o(&cfg)
	}
	e.srv = server.New(cfg)
	e.ts = httptest.NewUnstartedServer(e.srv)
	hs := e.srv.HTTPServer("")
	e.ts.Config.ReadHeaderTimeout = hs.ReadHeaderTimeout
	e.ts.Config.ReadTimeout = hs.ReadTimeout
	e.ts.Config.IdleTimeout = hs.IdleTimeout
	e.ts.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.srv.Shutdown(ctx)
		e.ts.Close()
	})
	e.aliceT, e.alice, err = e.st.CreateToken(context.Background(), "alice", "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, e.bob, err = e.st.CreateToken(context.Background(), "bob", "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// request sends a request with token (none when empty) and returns the
// response with its body read.
func (e *env) request(method, path, token string, body any) (*http.Response, []byte) {
	e.t.Helper()
	resp := e.send(method, path, token, body, nil)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, b
}

func (e *env) send(method, path, token string, body any, header http.Header) *http.Response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// getJSON GETs path as token and decodes a 200 answer into v.
func (e *env) getJSON(path, token string, v any) {
	e.t.Helper()
	resp, b := e.request("GET", path, token, nil)
	if resp.StatusCode != 200 {
		e.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		e.t.Fatalf("GET %s: %v in %s", path, err, b)
	}
}

// wantError checks an error answer: status, JSON shape and code.
func wantError(t *testing.T, what string, resp *http.Response, body []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("%s: status %d, want %d (%s)", what, resp.StatusCode, status, body)
		return
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: content type %q, want JSON", what, ct)
	}
	var eb struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &eb); err != nil {
		t.Errorf("%s: body %s is not a JSON error: %v", what, body, err)
		return
	}
	if eb.Error.Code != code || eb.Error.Message == "" {
		t.Errorf("%s: error %+v, want code %q and a message", what, eb.Error, code)
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	ID    string
	Event string
	Data  string
}

// readEvents parses an event stream into a channel, closed at its end.
// Comments are delivered as events named ":".
func readEvents(r io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Event != "" || len(data) > 0 {
					ev.Data = strings.Join(data, "\n")
					if ev.Event == "" {
						ev.Event = "message"
					}
					ch <- ev
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, ":"):
				ch <- sseEvent{Event: ":", Data: strings.TrimSpace(line[1:])}
			default:
				k, v, _ := strings.Cut(line, ":")
				v = strings.TrimPrefix(v, " ")
				switch k {
				case "id":
					ev.ID = v
				case "event":
					ev.Event = v
				case "data":
					data = append(data, v)
				}
			}
		}
	}()
	return ch
}

// next returns the next event that is not a comment or "ready", failing
// after timeout.
// idleFor reads an idle stream until a keep-alive comment arrives
// longer than d after the call: the stream was open all that time. A
// message or the stream's end fails the test. It returns how many
// keep-alives came.
func idleFor(t *testing.T, ch <-chan sseEvent, d time.Duration) int {
	t.Helper()
	past := time.Now().Add(d)
	deadline := time.After(d + 5*time.Second)
	n := 0
	for {
		select {
		case ev, ok := <-ch:
			switch {
			case !ok:
				t.Fatal("stream closed while idle")
			case ev.Event == ":":
				n++
				if time.Now().After(past) {
					return n
				}
			case ev.Event != "ready":
				t.Fatalf("an idle stream sent %+v", ev)
			}
		case <-deadline:
			t.Fatalf("no keep-alive within %s of an idle stream", d+5*time.Second)
		}
	}
}

// lastEvent reads ch to its end and returns the last event it sent.
func lastEvent(ch <-chan sseEvent) sseEvent {
	var last sseEvent
	for ev := range ch {
		last = ev
	}
	return last
}

func next(t *testing.T, ch <-chan sseEvent, timeout time.Duration) sseEvent {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("event stream ended")
			}
			if ev.Event == ":" || ev.Event == "ready" {
				continue
			}
			return ev
		case <-deadline:
			t.Fatal("no event within", timeout)
		}
	}
}

// turn posts a message and reads the whole event stream.
func (e *env) turn(token, key, text string) (*http.Response, []sseEvent) {
	e.t.Helper()
	resp := e.send("POST", "/api/v1/messages", token, map[string]string{"key": key, "text": text}, nil)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("POST /api/v1/messages: %d %s", resp.StatusCode, b)
	}
	var evs []sseEvent
	for ev := range readEvents(resp.Body) {
		if ev.Event != ":" {
			evs = append(evs, ev)
		}
	}
	return resp, evs
}

// doneOf returns the done event's data, failing when the stream did not
// end with one.
func doneOf(t *testing.T, evs []sseEvent) (out struct {
	SessionID string          `json:"session_id"`
	Key       string          `json:"key"`
	Text      string          `json:"text"`
	Messages  []*loom.Message `json:"messages"`
}) {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Event != "done" {
		t.Fatalf("stream did not end with done: %+v", evs)
	}
	if err := json.Unmarshal([]byte(evs[len(evs)-1].Data), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// seed stores a session for user with the given messages.
func (e *env) seed(s *loom.Session, msgs ...*loom.Message) *loom.Session {
	e.t.Helper()
	if s.ID == "" {
		s.ID = loom.NewID()
	}
	if err := e.st.Append(context.Background(), s, msgs...); err != nil {
		e.t.Fatal(err)
	}
	return s
}

func userMsg(text string) *loom.Message {
	return &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
}

func assistantMsg(text string) *loom.Message {
	return &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
}
