package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
func lockAsOtherProcess(st *sqlite.Store, id string) (*loom.Lease, error) {
	return st.Lock(context.Background(), id)
}

func TestListSessions(t *testing.T) {
	e := newEnv(t)
	api := loom.Project{ID: "0123456789abcdef", Name: "api", Root: "/src/api"}
	web := loom.Project{ID: "fedcba9876543210", Name: "web", Root: "/src/web"}
	var ids []string
	for i := range 7 {
		s := &loom.Session{UserID: "alice", Key: fmt.Sprintf("cli:api:%d", i), Project: api}
		if i%2 == 1 {
			s = &loom.Session{UserID: "alice", Key: fmt.Sprintf("telegram:%d", i)}
		}
		e.seed(s, userMsg(fmt.Sprintf("prompt number %d", i)), assistantMsg("ok"))
		ids = append(ids, s.ID)
	}
	webS := e.seed(&loom.Session{UserID: "alice", Key: "cli:web", Project: web, Title: "Frontend polish"}, userMsg("make the buttons round"))
	e.seed(&loom.Session{UserID: "bob", Key: "telegram:1"}, userMsg("bob's own prompt number 1"))
	forked, err := e.st.Fork(context.Background(), ids[0], loom.ForkOptions{Title: "a fork"})
	if err != nil {
		t.Fatal(err)
	}

	var all struct {
		Sessions []*loom.Session
		Next     string
	}
	e.getJSON("/api/v1/sessions", e.alice, &all)
	if len(all.Sessions) != 9 || all.Next != "" {
		t.Fatalf("list: %d sessions, next %q; want 9 and none", len(all.Sessions), all.Next)
	}
	if all.Sessions[0].ID != forked.ID {
		t.Errorf("not newest first: %s", all.Sessions[0].ID)
	}

	// Paging visits every session once.
	seen := map[string]bool{}
	cursor := ""
	pages := 0
	for {
		var page struct {
			Sessions []*loom.Session
			Next     string
		}
		e.getJSON("/api/v1/sessions?limit=2&cursor="+url.QueryEscape(cursor), e.alice, &page)
		pages++
		for _, s := range page.Sessions {
			if seen[s.ID] {
				t.Fatalf("session %s on two pages", s.ID)
			}
			seen[s.ID] = true
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if len(seen) != 9 || pages != 5 {
		t.Errorf("paging saw %d sessions in %d pages", len(seen), pages)
	}

	count := func(query string) int {
		var out struct{ Sessions []*loom.Session }
		e.getJSON("/api/v1/sessions?"+query, e.alice, &out)
		for _, s := range out.Sessions {
			if s.UserID != "alice" {
				t.Errorf("%s listed %s's session", query, s.UserID)
			}
		}
		return len(out.Sessions)
	}
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"surface=telegram", 3},
		{"surface=cli", 6},
		{"project=" + web.ID, 1},
		{"project=" + api.ID, 5},
		{"kind=fork", 1},
		{"kind=main&surface=cli", 5},
		{"q=frontend", 1},           // title
		{"q=buttons", 1},            // message text
		{"q=number+3", 1},           // words of a message
		{"q=telegram%3A5", 1},       // key
		{"q=" + ids[2][:23], 1},     // id prefix (past the millisecond, which ids made together share)
		{"q=prompt&surface=cli", 5}, // with a filter, fork included
		{"q=nothing-like-this", 0},
		{"parent=" + ids[0], 1},
		{"deleted=true", 0},
	} {
		if got := count(tc.query); got != tc.want {
			t.Errorf("%s: %d sessions, want %d", tc.query, got, tc.want)
		}
	}
	_ = webS

	for _, q := range []string{"limit=0", "limit=201", "limit=x", "kind=other", "cursor=!!", "cursor=" + url.QueryEscape("bm90IGEgY3Vyc29y"), "deleted=maybe"} {
		resp, b := e.request("GET", "/api/v1/sessions?"+q, e.alice, nil)
		wantError(t, q, resp, b, 400, "invalid")
	}
}

func TestGetPatchDeleteSession(t *testing.T) {
	e := newEnv(t)
	s := e.seed(&loom.Session{UserID: "alice", Key: "http:notes", Title: "Release notes"}, userMsg("draft the notes"))
	e.seed(&loom.Session{UserID: "alice", Key: "http:a", Title: "Twin"}, userMsg("x"))
	e.seed(&loom.Session{UserID: "alice", Key: "http:b", Title: "twin"}, userMsg("y"))

	for _, ref := range []string{s.ID, s.ID[:len(s.ID)-3], "http:notes", "release NOTES"} {
		var got loom.Session
		e.getJSON("/api/v1/sessions/"+url.PathEscape(ref), e.alice, &got)
		if got.ID != s.ID {
			t.Errorf("GET %q = %s, want %s", ref, got.ID, s.ID)
		}
	}
	resp, b := e.request("GET", "/api/v1/sessions/nope", e.alice, nil)
	wantError(t, "unknown session", resp, b, 404, "not_found")
	resp, b = e.request("GET", "/api/v1/sessions/twin", e.alice, nil)
	wantError(t, "ambiguous title", resp, b, 409, "ambiguous")
	if !strings.Contains(string(b), "candidates") {
		t.Errorf("ambiguous answer lists no candidates: %s", b)
	}

	resp, b = e.request("PATCH", "/api/v1/sessions/"+s.ID, e.alice, map[string]string{"title": "  Notes for 1.0 ", "description": "what changed"})
	if resp.StatusCode != 200 {
		t.Fatalf("PATCH: %d %s", resp.StatusCode, b)
	}
	got, _ := e.st.Session(context.Background(), s.ID)
	if got.Title != "Notes for 1.0" || got.Description != "what changed" {
		t.Errorf("after PATCH: title %q, description %q", got.Title, got.Description)
	}
	resp, b = e.request("PATCH", "/api/v1/sessions/"+s.ID, e.alice, map[string]string{"description": "only this"})
	if resp.StatusCode != 200 {
		t.Fatalf("PATCH description: %d %s", resp.StatusCode, b)
	}
	if got, _ := e.st.Session(context.Background(), s.ID); got.Title != "Notes for 1.0" || got.Description != "only this" {
		t.Errorf("a PATCH of the description changed the title: %+v", got)
	}
	for _, tc := range []struct{ name, body string }{
		{"nothing to change", `{}`},
		{"unknown field", `{"key":"http:other"}`},
		{"two-line title", `{"title":"a\nb"}`},
		{"long title", `{"title":"` + strings.Repeat("t", 201) + `"}`},
		{"not an object", `[1]`},
	} {
		resp, b := e.request("PATCH", "/api/v1/sessions/"+s.ID, e.alice, tc.body)
		wantError(t, "PATCH "+tc.name, resp, b, 400, "invalid")
	}
	resp, b = e.request("PATCH", "/api/v1/sessions/nope", e.alice, `{"title":"x"}`)
	wantError(t, "PATCH unknown", resp, b, 404, "not_found")

	// Delete moves to the trash: gone from the list, still readable by id.
	resp, _ = e.request("DELETE", "/api/v1/sessions/"+s.ID, e.alice, nil)
	if resp.StatusCode != 204 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	var trashed loom.Session
	e.getJSON("/api/v1/sessions/"+s.ID, e.alice, &trashed)
	if trashed.DeletedAt == nil {
		t.Error("deleted session has no deleted_at")
	}
	var trash struct{ Sessions []*loom.Session }
	e.getJSON("/api/v1/sessions?deleted=true", e.alice, &trash)
	if len(trash.Sessions) != 1 {
		t.Errorf("trash holds %d sessions", len(trash.Sessions))
	}
	resp, b = e.request("DELETE", "/api/v1/sessions/"+s.ID+"?purge=maybe", e.alice, nil)
	wantError(t, "bad purge", resp, b, 400, "invalid")
	resp, _ = e.request("DELETE", "/api/v1/sessions/"+s.ID+"?purge=true", e.alice, nil)
	if resp.StatusCode != 204 {
		t.Fatalf("DELETE purge: %d", resp.StatusCode)
	}
	resp, b = e.request("GET", "/api/v1/sessions/"+s.ID, e.alice, nil)
	wantError(t, "purged session", resp, b, 404, "not_found")
	resp, b = e.request("DELETE", "/api/v1/sessions/"+s.ID, e.alice, nil)
	wantError(t, "DELETE purged", resp, b, 404, "not_found")
}

func TestMessages(t *testing.T) {
	e := newEnv(t)
	var msgs []*loom.Message
	for i := range 120 {
		if i%2 == 0 {
			msgs = append(msgs, userMsg(fmt.Sprintf("question %d", i)))
		} else {
			msgs = append(msgs, assistantMsg(fmt.Sprintf("answer %d", i)))
		}
	}
	s := e.seed(&loom.Session{UserID: "alice", Key: "http:long"}, msgs...)
	type page struct {
		Messages   []*loom.Message
		NextBefore int64 `json:"next_before"`
	}
	var p page
	e.getJSON("/api/v1/sessions/"+s.ID+"/messages", e.alice, &p)
	if len(p.Messages) != 50 || p.Messages[0].Seq != 71 || p.Messages[49].Seq != 120 || p.NextBefore != 71 {
		t.Fatalf("newest page: %d messages %d..%d, next_before %d", len(p.Messages), p.Messages[0].Seq, p.Messages[len(p.Messages)-1].Seq, p.NextBefore)
	}
	// Page back to the start: every seq once, in order.
	var seqs []int64
	before := int64(0)
	for {
		var pg page
		e.getJSON(fmt.Sprintf("/api/v1/sessions/%s/messages?limit=33&before=%d", s.ID, before), e.alice, &pg)
		var chunk []int64
		for _, m := range pg.Messages {
			chunk = append(chunk, m.Seq)
		}
		seqs = append(chunk, seqs...)
		if pg.NextBefore == 0 {
			break
		}
		before = pg.NextBefore
	}
	for i, q := range seqs {
		if q != int64(i+1) {
			t.Fatalf("paging back gave seqs %v", seqs)
		}
	}
	if len(seqs) != 120 {
		t.Fatalf("paging back gave %d messages", len(seqs))
	}
	e.getJSON("/api/v1/sessions/"+s.ID+"/messages?after=115&limit=10", e.alice, &p)
	if len(p.Messages) != 5 || p.Messages[0].Seq != 116 {
		t.Errorf("after=115: %d messages from %d", len(p.Messages), p.Messages[0].Seq)
	}
	for _, q := range []string{"limit=0", "limit=1001", "before=-1", "after=x"} {
		resp, b := e.request("GET", "/api/v1/sessions/"+s.ID+"/messages?"+q, e.alice, nil)
		wantError(t, q, resp, b, 400, "invalid")
	}
	resp, b := e.request("GET", "/api/v1/sessions/nope/messages", e.alice, nil)
	wantError(t, "messages of an unknown session", resp, b, 404, "not_found")
}

func TestFork(t *testing.T) {
	e := newEnv(t)
	s := e.seed(&loom.Session{UserID: "alice", Key: "http:f"},
		userMsg("one"), assistantMsg("1"), userMsg("two"), assistantMsg("2"), userMsg("three"), assistantMsg("3"))
	resp, b := e.request("POST", "/api/v1/sessions/"+s.ID+"/fork", e.alice, map[string]any{"turn": 2, "title": "from two"})
	if resp.StatusCode != 201 {
		t.Fatalf("fork: %d %s", resp.StatusCode, b)
	}
	var f loom.Session
	json.Unmarshal(b, &f)
	if f.Kind != "fork" || f.ParentID != s.ID || f.ForkTurn != 2 || f.MessageCount != 4 || f.Title != "from two" || f.UserID != "alice" {
		t.Errorf("fork = %+v", f)
	}
	if loc := resp.Header.Get("Location"); loc != "/api/v1/sessions/"+f.ID {
		t.Errorf("Location = %q", loc)
	}
	resp, b = e.request("POST", "/api/v1/sessions/"+s.ID+"/fork", e.alice, `{}`)
	if resp.StatusCode != 201 {
		t.Fatalf("fork of every turn: %d %s", resp.StatusCode, b)
	}
	json.Unmarshal(b, &f)
	if f.MessageCount != 6 {
		t.Errorf("fork of every turn has %d messages", f.MessageCount)
	}
	for _, tc := range []struct{ name, body string }{
		{"turn past the end", `{"turn":4}`},
		{"negative turn", `{"turn":-1}`},
		{"turn not a number", `{"turn":"2"}`},
		{"unknown field", `{"turn":1,"key":"x"}`},
	} {
		resp, b := e.request("POST", "/api/v1/sessions/"+s.ID+"/fork", e.alice, tc.body)
		wantError(t, tc.name, resp, b, 400, "invalid")
	}
	resp, b = e.request("POST", "/api/v1/sessions/nope/fork", e.alice, `{}`)
	wantError(t, "fork unknown", resp, b, 404, "not_found")
}

func TestSearch(t *testing.T) {
	e := newEnv(t)
	a := e.seed(&loom.Session{UserID: "alice", Key: "http:s1", Title: "Kubernetes"}, userMsg("why does the kubelet restart"), assistantMsg("the kubelet restarts when memory runs out"))
	e.seed(&loom.Session{UserID: "alice", Key: "telegram:s2"}, userMsg("kubelet logs please"))
	e.seed(&loom.Session{UserID: "bob", Key: "http:s1"}, userMsg("my own kubelet question"))

	type result struct{ Hits []loom.SearchHit }
	var r result
	e.getJSON("/api/v1/search?q=kubelet", e.alice, &r)
	if len(r.Hits) != 3 {
		t.Fatalf("alice's search: %d hits, want 3", len(r.Hits))
	}
	for _, h := range r.Hits {
		if h.SessionID == "" || h.MessageID == "" || h.Seq == 0 || h.Snippet == "" || !strings.Contains(h.Snippet, "**") {
			t.Errorf("hit = %+v", h)
		}
	}
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"q=kubelet&role=assistant", 1},
		{"q=kubelet&surface=telegram", 1},
		{"q=kubelet&session=" + a.ID, 2},
		{"q=kubelet&session=Kubernetes", 2},
		{"q=kubelet&limit=1", 1},
		{"q=%22memory+runs+out%22", 1},
		{"q=%22out+memory%22", 0},
		{"q=kubelet+AND+NEAR(", 0}, // operators are words, never syntax errors
	} {
		e.getJSON("/api/v1/search?"+tc.query, e.alice, &r)
		if len(r.Hits) != tc.want {
			t.Errorf("%s: %d hits, want %d", tc.query, len(r.Hits), tc.want)
		}
	}
	for _, q := range []string{"", "q=", "q=x&role=robot", "q=x&limit=0", "q=x&since=yesterday"} {
		resp, b := e.request("GET", "/api/v1/search?"+q, e.alice, nil)
		wantError(t, "search "+q, resp, b, 400, "invalid")
	}
	resp, b := e.request("GET", "/api/v1/search?q=x&session=nope", e.alice, nil)
	wantError(t, "search in an unknown session", resp, b, 404, "not_found")
}

// The event stream tails new messages with seq as the event id, resumes
// after Last-Event-ID, re-sends a message whose tool part finished, keeps
// idle connections alive, and outlives the server's read timeout.
func TestEvents(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.KeepAlive = 100 * time.Millisecond
		c.ReadTimeout = 300 * time.Millisecond
	})
	s := e.seed(&loom.Session{UserID: "alice", Key: "http:tail"}, userMsg("one"), assistantMsg("two"))
	// Another process writes the session.
	writer, err := sqlite.Open(context.Background(), e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()

	resp := e.send("GET", "/api/v1/sessions/"+s.ID+"/events", e.alice, nil, nil)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	evs := readEvents(resp.Body)
	// Idle longer than the read timeout: the stream stays open and sends
	// keep-alive comments.
	time.Sleep(700 * time.Millisecond)
	keepAlives := 0
drain:
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatal("stream closed while idle")
			}
			if ev.Event == ":" {
				keepAlives++
			}
			if ev.Event == "message" {
				t.Fatalf("old message sent on a live tail: %+v", ev)
			}
		default:
			break drain
		}
	}
	if keepAlives == 0 {
		t.Error("no keep-alive comment on an idle stream")
	}

	x, _ := writer.Session(context.Background(), s.ID)
	started := time.Now().UTC()
	toolMsg := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{
		{Type: loom.PartText, Text: "checking"},
		{Type: loom.PartTool, CallID: "c1", Name: "read_file", Status: loom.ToolRunning, Input: json.RawMessage(`{"path":"a.txt"}`), StartedAt: &started},
	}}
	if err := writer.Append(context.Background(), x, userMsg("three"), toolMsg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3", "4"} {
		ev := next(t, evs, 5*time.Second)
		if ev.Event != "message" || ev.ID != want {
			t.Fatalf("event = %+v, want message %s", ev, want)
		}
		var m loom.Message
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil || fmt.Sprint(m.Seq) != want || m.SessionID != s.ID {
			t.Fatalf("event data = %s (%v)", ev.Data, err)
		}
	}
	// The tool finishes: message 4 comes again, completed.
	p := toolMsg.Parts[1]
	ended := time.Now().UTC()
	p.Status, p.Output, p.EndedAt = loom.ToolCompleted, json.RawMessage(`"contents"`), &ended
	if err := writer.UpdatePart(context.Background(), s.ID, 4, p); err != nil {
		t.Fatal(err)
	}
	ev := next(t, evs, 5*time.Second)
	if ev.ID != "4" || !strings.Contains(ev.Data, `"completed"`) {
		t.Fatalf("after the tool finished: %+v", ev)
	}

	// Resume: a client that saw up to 2 gets 3 and 4 first.
	h := http.Header{"Last-Event-ID": {"2"}}
	r2 := e.send("GET", "/api/v1/sessions/"+s.ID+"/events", e.alice, nil, h)
	defer r2.Body.Close()
	evs2 := readEvents(r2.Body)
	for _, want := range []string{"3", "4"} {
		if ev := next(t, evs2, 5*time.Second); ev.ID != want {
			t.Fatalf("resumed stream: event %+v, want id %s", ev, want)
		}
	}
	// ?after= does the same for a first connection.
	r3 := e.send("GET", "/api/v1/sessions/"+s.ID+"/events?after=0", e.alice, nil, nil)
	defer r3.Body.Close()
	evs3 := readEvents(r3.Body)
	for _, want := range []string{"1", "2", "3", "4"} {
		if ev := next(t, evs3, 5*time.Second); ev.ID != want {
			t.Fatalf("after=0: event %+v, want id %s", ev, want)
		}
	}
	if err := writer.Append(context.Background(), x, assistantMsg("five")); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan sseEvent{evs, evs2, evs3} {
		if ev := next(t, ch, 5*time.Second); ev.ID != "5" {
			t.Fatalf("live message: %+v, want id 5", ev)
		}
	}

	for _, tc := range []struct{ path, lastID string }{
		{"/api/v1/sessions/" + s.ID + "/events?after=-3", ""},
		{"/api/v1/sessions/" + s.ID + "/events", "abc"},
	} {
		h := http.Header{}
		if tc.lastID != "" {
			h.Set("Last-Event-ID", tc.lastID)
		}
		resp := e.send("GET", tc.path, e.alice, nil, h)
		var b [1024]byte
		n, _ := resp.Body.Read(b[:])
		resp.Body.Close()
		wantError(t, "events "+tc.path+" "+tc.lastID, resp, b[:n], 400, "invalid")
	}
	resp4, b := e.request("GET", "/api/v1/sessions/nope/events", e.alice, nil)
	wantError(t, "events of an unknown session", resp4, b, 404, "not_found")
}

// Bob's token reaches none of alice's sessions: not by id, prefix, key or
// title, not through any endpoint, and not in lists, searches or the
// dashboard. Each answers as if the session did not exist.
func TestIsolation(t *testing.T) {
	e := newEnv(t)
	a := e.seed(&loom.Session{UserID: "alice", Key: "telegram:secret", Title: "Alice private plans"},
		userMsg("my secret launch plan is zebra"), assistantMsg("noted: zebra"))
	// Alice's bot turn with the same key bob will use.
	e.fake.Enqueue(openaitest.Reply{Text: "alice reply"})
	_, evs := e.turn(e.alice, "http:shared", "alice speaking, zebra")
	aliceShared := doneOf(t, evs).SessionID

	for _, ref := range []string{a.ID, a.ID[:len(a.ID)-3], "telegram:secret", "Alice private plans", aliceShared} {
		esc := url.PathEscape(ref)
		for _, tc := range []struct{ method, path, body string }{
			{"GET", "/api/v1/sessions/" + esc, ""},
			{"PATCH", "/api/v1/sessions/" + esc, `{"title":"pwned"}`},
			{"DELETE", "/api/v1/sessions/" + esc, ""},
			{"DELETE", "/api/v1/sessions/" + esc + "?purge=true", ""},
			{"GET", "/api/v1/sessions/" + esc + "/messages", ""},
			{"POST", "/api/v1/sessions/" + esc + "/fork", `{}`},
			{"GET", "/api/v1/sessions/" + esc + "/events", ""},
			{"GET", "/api/v1/search?q=zebra&session=" + url.QueryEscape(ref), ""},
		} {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			resp, b := e.request(tc.method, tc.path, e.bob, body)
			wantError(t, "bob: "+tc.method+" "+tc.path, resp, b, 404, "not_found")
			if strings.Contains(string(b), "zebra") || (ref != a.ID && strings.Contains(string(b), a.ID)) {
				t.Errorf("bob: %s %s leaks alice's data: %s", tc.method, tc.path, b)
			}
		}
	}
	var list struct{ Sessions []*loom.Session }
	for _, q := range []string{"", "?q=zebra", "?q=" + a.ID[:8], "?surface=telegram", "?deleted=true", "?parent=" + a.ID} {
		e.getJSON("/api/v1/sessions"+q, e.bob, &list)
		if len(list.Sessions) != 0 {
			t.Errorf("bob's list %q shows %d sessions", q, len(list.Sessions))
		}
	}
	var res struct{ Hits []loom.SearchHit }
	e.getJSON("/api/v1/search?q=zebra", e.bob, &res)
	if len(res.Hits) != 0 {
		t.Errorf("bob's search finds %d of alice's messages", len(res.Hits))
	}
	// The same key is bob's own session, and his agent's search tool sees
	// none of alice's messages.
	e.fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "session_search", Args: `{"query":"zebra"}`}}},
		openaitest.Reply{Text: "nothing found"},
	)
	_, evs = e.turn(e.bob, "http:shared", "what is the launch plan?")
	bobShared := doneOf(t, evs).SessionID
	if bobShared == aliceShared {
		t.Fatal("bob's turn went into alice's session")
	}
	for _, ev := range evs {
		if ev.Event == "tool_end" && (strings.Contains(ev.Data, a.ID) || strings.Contains(ev.Data, "secret launch") || strings.Contains(ev.Data, aliceShared)) {
			t.Errorf("bob's session_search returned alice's messages: %s", ev.Data)
		}
	}
	// Dashboard pages too.
	cookie := http.Header{"Cookie": {"loom_token=" + e.bob}}
	for _, p := range []string{"/s/" + a.ID, "/s/" + a.ID + "/m/1", "/s/" + a.ID + "/usage"} {
		resp := e.send("GET", p, "", nil, cookie)
		var b [65536]byte
		n, _ := resp.Body.Read(b[:])
		resp.Body.Close()
		if resp.StatusCode != 404 || strings.Contains(string(b[:n]), "zebra") {
			t.Errorf("bob: GET %s = %d", p, resp.StatusCode)
		}
	}
	for _, p := range []string{"/", "/search?q=zebra"} {
		resp := e.send("GET", p, "", nil, cookie)
		var b [65536]byte
		n, _ := resp.Body.Read(b[:])
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(b[:n]), "Alice private") || strings.Contains(string(b[:n]), a.ID) {
			t.Errorf("bob: GET %s = %d, or shows alice's session", p, resp.StatusCode)
		}
	}
	// Alice's sessions are untouched.
	got, err := e.st.Session(context.Background(), a.ID)
	if err != nil || got.Title != "Alice private plans" || got.DeletedAt != nil || got.MessageCount != 2 {
		t.Errorf("alice's session after bob's attempts: %+v, %v", got, err)
	}
	forks, _ := e.st.Sessions(context.Background(), loom.SessionFilter{ParentID: a.ID})
	if len(forks) != 0 {
		t.Errorf("bob forked alice's session")
	}
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
		var last sseEvent
		for ev := range evs {
			last = ev
		}
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
		var last sseEvent
		for ev := range evs {
			last = ev
		}
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
