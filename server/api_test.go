package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/sqlite"
)

func TestHealthz(t *testing.T) {
	e := newEnv(t)
	var out map[string]string
	e.getJSON("/healthz", "", &out)
	if out["status"] != "ok" {
		t.Fatalf("healthz = %v", out)
	}
}

// Every API call needs a live token: missing, malformed, unknown,
// revoked and expired tokens are 401 with a JSON error and a
// WWW-Authenticate header.
func TestAuth(t *testing.T) {
	e := newEnv(t)
	revokedTok, revoked, err := e.st.CreateToken(context.Background(), "alice", "old", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.RevokeToken(context.Background(), revokedTok.ID); err != nil {
		t.Fatal(err)
	}
	_, expired, err := e.st.CreateToken(context.Background(), "alice", "brief", time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	endpoints := []struct{ method, path string }{
		{"GET", "/api/v1/sessions"},
		{"GET", "/api/v1/sessions/x"},
		{"PATCH", "/api/v1/sessions/x"},
		{"DELETE", "/api/v1/sessions/x"},
		{"GET", "/api/v1/sessions/x/messages"},
		{"POST", "/api/v1/sessions/x/fork"},
		{"GET", "/api/v1/sessions/x/events"},
		{"GET", "/api/v1/search?q=x"},
		{"POST", "/api/v1/messages"},
	}
	for _, ep := range endpoints {
		for _, tc := range []struct{ name, header string }{
			{"missing", ""},
			{"wrong scheme", "Basic " + e.alice},
			{"unknown", "Bearer loom_unknown"},
			{"revoked", "Bearer " + revoked},
			{"expired", "Bearer " + expired},
		} {
			h := http.Header{}
			if tc.header != "" {
				h.Set("Authorization", tc.header)
			}
			resp := e.send(ep.method, ep.path, "", `{}`, h)
			var b [4096]byte
			n, _ := resp.Body.Read(b[:])
			resp.Body.Close()
			what := fmt.Sprintf("%s %s with %s token", ep.method, ep.path, tc.name)
			wantError(t, what, resp, b[:n], 401, "unauthorized")
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: no WWW-Authenticate header", what)
			}
		}
	}
	// The dashboard cookie reads, but never writes.
	cookie := http.Header{"Cookie": {"loom_token=" + e.alice}}
	resp := e.send("GET", "/api/v1/sessions", "", nil, cookie)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET with the cookie: %d, want 200", resp.StatusCode)
	}
	resp = e.send("POST", "/api/v1/messages", "", `{"key":"http:x","text":"hi"}`, cookie)
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("POST with only the cookie: %d, want 401", resp.StatusCode)
	}
	// No secret reaches the log.
	if strings.Contains(e.logs.String(), e.alice) || strings.Contains(e.logs.String(), revoked) {
		t.Error("a token appears in the access log")
	}
}

func TestUnknownRoutes(t *testing.T) {
	e := newEnv(t)
	resp, b := e.request("GET", "/api/v1/nothing", e.alice, nil)
	wantError(t, "unknown endpoint", resp, b, 404, "not_found")
	resp, b = e.request("PUT", "/api/v1/sessions/x", e.alice, `{}`)
	wantError(t, "PUT on a session", resp, b, 405, "method_not_allowed")
	if allow := resp.Header.Get("Allow"); !strings.Contains(allow, "PATCH") || !strings.Contains(allow, "DELETE") {
		t.Errorf("Allow = %q", allow)
	}
}

// POST /api/v1/messages runs a turn in the session with the key, created
// by the first message, and streams it; the next turn continues it.
func TestPostMessage(t *testing.T) {
	e := newEnv(t)
	e.fake.Enqueue(openaitest.Reply{Text: "Hello **Alice**, nice to meet you.", Reasoning: "greet back"})
	_, evs := e.turn(e.alice, "telegram:42", "hi, I am Alice")
	if evs[0].Event != "start" || !strings.Contains(evs[0].Data, `"created":true`) {
		t.Fatalf("first event = %+v, want start with created", evs[0])
	}
	var text strings.Builder
	kinds := map[string]int{}
	for _, ev := range evs {
		kinds[ev.Event]++
		if ev.Event == "text" {
			var d struct{ Text string }
			json.Unmarshal([]byte(ev.Data), &d)
			text.WriteString(d.Text)
		}
	}
	if kinds["text"] < 2 || kinds["reasoning"] < 1 {
		t.Errorf("events %v: want text deltas and reasoning", kinds)
	}
	for k := range kinds {
		if !slices.Contains([]string{"start", "text", "reasoning", "done"}, k) {
			t.Errorf("event %q streamed; events %v", k, kinds)
		}
	}
	if text.String() != "Hello **Alice**, nice to meet you." {
		t.Errorf("streamed text = %q", text.String())
	}
	done := doneOf(t, evs)
	if done.Key != "telegram:42" || len(done.Messages) != 1 || done.Messages[0].Role != "assistant" || done.Messages[0].Seq != 2 {
		t.Fatalf("done = %+v", done)
	}

	s, err := e.st.Session(context.Background(), done.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if s.UserID != "alice" || s.Key != "telegram:42" || s.Surface != "telegram" || s.Project.ID != "" || s.MessageCount != 2 || s.Model != "gpt-4o-mini" {
		t.Errorf("session = %+v", s)
	}
	if s.Lock != nil {
		t.Errorf("lock still held after the turn: %+v", s.Lock)
	}
	stored, _ := e.st.Messages(context.Background(), s.ID, loom.MessageQuery{})
	got, _ := json.Marshal(stored[1])
	want, _ := json.Marshal(done.Messages[0])
	if string(got) != string(want) {
		t.Errorf("done message differs from the stored one:\n%s\n%s", want, got)
	}

	// The same key continues the session, and the model sees the history.
	_, evs = e.turn(e.alice, "telegram:42", "what is my name?")
	if !strings.Contains(evs[0].Data, `"created":false`) {
		t.Errorf("second turn start = %s", evs[0].Data)
	}
	done2 := doneOf(t, evs)
	if done2.SessionID != s.ID || done2.Messages[0].Seq != 4 {
		t.Errorf("second turn went to %s seq %d", done2.SessionID, done2.Messages[0].Seq)
	}
	reqs := e.fake.Requests()
	last := reqs[len(reqs)-1].Body["messages"].([]any)
	if len(last) < 4 { // system, user, assistant, user
		t.Errorf("the model saw %d messages on the second turn", len(last))
	}
}

// Tool calls stream as tool_start and tool_end, and are stored completed.
func TestPostMessageToolCall(t *testing.T) {
	e := newEnv(t)
	e.seed(&loom.Session{UserID: "alice", Key: "http:old"}, userMsg("the deploy key rotates on Fridays"))
	e.fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "session_search", Args: `{"query":"deploy key"}`}}},
		openaitest.Reply{Text: "It rotates on Fridays."},
	)
	_, evs := e.turn(e.alice, "http:new", "when does the deploy key rotate?")
	var start, end map[string]any
	for _, ev := range evs {
		switch ev.Event {
		case "tool_start":
			json.Unmarshal([]byte(ev.Data), &start)
		case "tool_end":
			json.Unmarshal([]byte(ev.Data), &end)
		}
	}
	if start["tool"] != "session_search" || start["input"].(map[string]any)["query"] != "deploy key" {
		t.Errorf("tool_start = %v", start)
	}
	if end["status"] != "completed" || !strings.Contains(end["output"].(string), "Fridays") || end["duration_ms"] == nil {
		t.Errorf("tool_end = %v", end)
	}
	done := doneOf(t, evs)
	if len(done.Messages) != 2 || done.Text != "It rotates on Fridays." {
		t.Fatalf("done = %+v", done)
	}
	var tool *loom.Part
	for i, p := range done.Messages[0].Parts {
		if p.Type == loom.PartTool {
			tool = &done.Messages[0].Parts[i]
		}
	}
	if tool == nil || tool.Status != loom.ToolCompleted || tool.StartedAt == nil || tool.EndedAt == nil {
		t.Errorf("stored tool part = %+v", tool)
	}
}

func TestPostMessageErrors(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.MaxBodyBytes = 4096 })
	for _, tc := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"not JSON", `{"key":`, 400, "invalid"},
		{"empty body", ``, 400, "invalid"},
		{"two objects", `{"key":"http:a","text":"x"} {}`, 400, "invalid"},
		{"unknown field", `{"key":"http:a","text":"x","model":"y"}`, 400, "invalid"},
		{"no key", `{"text":"x"}`, 400, "invalid"},
		{"key without surface", `{"key":"abc","text":"x"}`, 400, "invalid"},
		{"key with a bad surface", `{"key":"a b:c","text":"x"}`, 400, "invalid"},
		{"empty text", `{"key":"http:a","text":"  "}`, 400, "invalid"},
		{"too large", `{"key":"http:a","text":"` + strings.Repeat("x", 5000) + `"}`, 413, "too_large"},
	} {
		resp, b := e.request("POST", "/api/v1/messages", e.alice, tc.body)
		wantError(t, tc.name, resp, b, tc.status, tc.code)
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Errorf("refused requests reached the model %d times", n)
	}

	// A provider failure ends the stream with an error event; the user
	// message stays and nothing partial is stored.
	e.fake.Enqueue(openaitest.Reply{Status: 400, Error: "model does not exist"})
	_, evs := e.turn(e.alice, "http:fail", "hello")
	lastEv := evs[len(evs)-1]
	if lastEv.Event != "error" || !strings.Contains(lastEv.Data, "model does not exist") {
		t.Fatalf("last event = %+v, want the provider's error", lastEv)
	}
	found, _ := e.st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Key: "http:fail"})
	if len(found) != 1 || found[0].MessageCount != 1 {
		t.Fatalf("after a failed turn: %+v", found)
	}
}

// Without an agent, POST /api/v1/messages is 503 and the rest works.
func TestPostMessageNoAgent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(context.Context, loom.Store, *loom.Session, agent.Choice) (*agent.Loop, error)
	}{
		{"nil", nil},
		{"no provider", func(context.Context, loom.Store, *loom.Session, agent.Choice) (*agent.Loop, error) {
			return nil, loom.Errorf(loom.EINVALID, "no model provider is configured")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *server.Config) {
				c.Agent = nil
				if tc.build != nil {
					c.Agent = &agent.Service{Store: c.Store, Build: tc.build}
				}
			})
			resp, b := e.request("POST", "/api/v1/messages", e.alice, `{"key":"http:a","text":"hi"}`)
			wantError(t, "POST without an agent", resp, b, 503, "unavailable")
			if tc.build != nil && !strings.Contains(string(b), "no model provider") {
				t.Errorf("503 body %s does not say why", b)
			}
			var list struct{ Sessions []*loom.Session }
			e.getJSON("/api/v1/sessions", e.alice, &list)
			if len(list.Sessions) != 0 {
				t.Errorf("a refused turn created a session")
			}
		})
	}
}

// A second turn on a key while one runs is 409, whether the first runs in
// this server or in another process holding the session's lock.
func TestPostMessageConflict(t *testing.T) {
	e := newEnv(t)
	e.fake.Enqueue(openaitest.Reply{Text: strings.Repeat("slow ", 20), Delay: 20 * time.Millisecond})
	resp := e.send("POST", "/api/v1/messages", e.alice, map[string]string{"key": "discord:7", "text": "one"}, nil)
	defer resp.Body.Close()
	evs := readEvents(resp.Body)
	start := next(t, evs, 5*time.Second)
	if start.Event != "start" {
		t.Fatalf("first event = %+v", start)
	}
	r2, b := e.request("POST", "/api/v1/messages", e.alice, `{"key":"discord:7","text":"two"}`)
	wantError(t, "concurrent turn on the same key", r2, b, 409, "locked")
	// Another user's same key is another session: no conflict.
	e.fake.Enqueue(openaitest.Reply{Text: "bob's"})
	_, bobEvs := e.turn(e.bob, "discord:7", "hi")
	doneOf(t, bobEvs)
	for ev := range evs {
		if ev.Event == "done" {
			goto finished
		}
	}
	t.Fatal("first turn did not finish")
finished:
	var sid struct {
		SessionID string `json:"session_id"`
	}
	json.Unmarshal([]byte(start.Data), &sid)

	// Another process (another store handle) holding the lock.
	other, err := sqlite.Open(context.Background(), e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lease, err := lockAsOtherProcess(other, sid.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	r3, b := e.request("POST", "/api/v1/messages", e.alice, `{"key":"discord:7","text":"three"}`)
	wantError(t, "turn on a session locked by another process", r3, b, 409, "locked")
	if !strings.Contains(string(b), `"lock"`) {
		t.Errorf("409 does not name the holder: %s", b)
	}
	lease.Release(context.Background())
	e.fake.Enqueue(openaitest.Reply{Text: "free again"})
	_, evs3 := e.turn(e.alice, "discord:7", "four")
	doneOf(t, evs3)
}

// lockAsOtherProcess locks a session through a second handle, which the
// store treats like another process of this host (this one is alive).
func lockAsOtherProcess(st *sqlite.Store, id string) (loom.Lease, error) {
	return st.Lock(context.Background(), id)
}

// Shutdown lets a running turn finish within the grace period, and cuts
// it at a message boundary after it: the user message stays, nothing
// partial is stored, and the client gets an error event.
func TestShutdown(t *testing.T) {
	t.Run("finish", func(t *testing.T) {
		e := newEnv(t)
		e.fake.Enqueue(openaitest.Reply{Text: strings.Repeat("word ", 10), Delay: 20 * time.Millisecond})
		resp := e.send("POST", "/api/v1/messages", e.alice, map[string]string{"key": "http:sd", "text": "go"}, nil)
		defer resp.Body.Close()
		evs := readEvents(resp.Body)
		next(t, evs, 5*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.srv.Shutdown(ctx); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		last := lastEvent(evs)
		if last.Event != "done" {
			t.Fatalf("turn did not finish during shutdown: last event %+v", last)
		}
		r2, b := e.request("POST", "/api/v1/messages", e.alice, `{"key":"http:sd2","text":"late"}`)
		wantError(t, "turn after shutdown", r2, b, 503, "unavailable")
	})
	t.Run("cut", func(t *testing.T) {
		e := newEnv(t)
		e.fake.Enqueue(openaitest.Reply{Text: "partial answer that never completes", Hang: true})
		resp := e.send("POST", "/api/v1/messages", e.alice, map[string]string{"key": "http:cut", "text": "go"}, nil)
		defer resp.Body.Close()
		evs := readEvents(resp.Body)
		var sid struct {
			SessionID string `json:"session_id"`
		}
		json.Unmarshal([]byte(next(t, evs, 5*time.Second).Data), &sid)
		next(t, evs, 5*time.Second) // some text streamed
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if err := e.srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("shutdown = %v, want the grace period exceeded", err)
		}
		last := lastEvent(evs)
		if last.Event != "error" {
			t.Errorf("cut turn ended with %+v, want an error event", last)
		}
		msgs, _ := e.st.Messages(context.Background(), sid.SessionID, loom.MessageQuery{})
		if len(msgs) != 1 || msgs[0].Role != "user" {
			t.Errorf("after a cut turn the session holds %d messages", len(msgs))
		}
		s, _ := e.st.Session(context.Background(), sid.SessionID)
		if s.Lock != nil {
			t.Errorf("cut turn left its lock")
		}
	})
}

// Serve runs a real listener and shuts down when its context ends.
func TestServe(t *testing.T) {
	e := newEnv(t)
	ln, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{Store: e.st, Tokens: e.st})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, time.Second) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	// An open event stream does not hold shutdown up.
	s := e.seed(&loom.Session{UserID: "alice", Key: "http:serve"}, userMsg("x"))
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/v1/sessions/"+s.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+e.alice)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop")
	}
}
