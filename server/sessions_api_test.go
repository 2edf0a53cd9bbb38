package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/report"
)

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
	// q is a filter like the others: it pages.
	var qpage struct {
		Sessions []*loom.Session
		Next     string
	}
	e.getJSON("/api/v1/sessions?q=prompt&surface=cli&limit=3", e.alice, &qpage)
	if len(qpage.Sessions) != 3 || qpage.Next == "" {
		t.Fatalf("first page of q: %d sessions, next %q", len(qpage.Sessions), qpage.Next)
	}
	e.getJSON("/api/v1/sessions?q=prompt&surface=cli&limit=3&cursor="+url.QueryEscape(qpage.Next), e.alice, &qpage)
	if len(qpage.Sessions) != 2 || qpage.Next != "" {
		t.Fatalf("second page of q: %d sessions, next %q", len(qpage.Sessions), qpage.Next)
	}

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
	resp, b = e.request("POST", "/api/v1/sessions/"+s.ID+"/fork", e.alice, `{"title":"two\nlines"}`)
	wantError(t, "title of two lines", resp, b, 400, "invalid")
	// A session in the trash is not there to fork, as the store's fork
	// plan says, whoever asks.
	if _, err := e.st.Delete(context.Background(), s.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	resp, b = e.request("POST", "/api/v1/sessions/"+s.ID+"/fork", e.alice, `{}`)
	wantError(t, "fork in the trash", resp, b, 404, "not_found")
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
		{"q=kubelet+AND+NEAR(", 3}, // operators are words, never syntax errors: no message holds them all, and the 3 with kubelet hold some
		{"q=kubelet+AND+NEAR(&exact=true", 0},
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

func TestUsageReport(t *testing.T) {
	e := newEnv(t)
	at := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	reply := func(model string, u loom.Usage) *loom.Message {
		m := assistantMsg("done")
		m.Provider, m.Model, m.Usage, m.CreatedAt = "anthropic", model, u, at
		return m
	}
	// Haiku 4.5: 1M input at $1, 100k output at $5 per million.
	e.seed(&loom.Session{UserID: "alice", Key: "http:s1"}, userMsg("go"), reply("claude-haiku-4-5", loom.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}))
	e.seed(&loom.Session{UserID: "alice", Key: "telegram:s2"}, userMsg("go"), reply("local-model", loom.Usage{InputTokens: 10}))
	e.seed(&loom.Session{UserID: "bob", Key: "http:s1"}, userMsg("go"), reply("claude-haiku-4-5", loom.Usage{InputTokens: 7}))

	var rep report.Report
	e.getJSON("/api/v1/usage?tz=UTC&breakdown=agent", e.alice, &rep)
	if len(rep.Rows) != 1 || rep.Rows[0].Period != "2026-03-01" || rep.Total.CostUSD == nil || *rep.Total.CostUSD != 1.5 ||
		rep.Total.InputTokens != 1_000_010 || len(rep.Rows[0].Breakdown) != 2 || strings.Join(rep.Total.Unpriced, ",") != "local-model" {
		t.Fatalf("alice's report: %+v", rep)
	}
	// Two hours east, 23:30 UTC is on March 2nd.
	e.getJSON("/api/v1/usage?by=month&tz=Europe/Athens&since=2026-03-02", e.alice, &rep)
	if len(rep.Rows) != 1 || rep.Rows[0].Period != "2026-03" || rep.Total.Messages != 2 {
		t.Fatalf("alice by month in Athens since March 2nd: %+v", rep)
	}
	e.getJSON("/api/v1/usage?by=block", e.bob, &rep)
	if len(rep.Rows) != 1 || rep.Total.InputTokens != 7 || rep.Rows[0].Block == nil {
		t.Fatalf("bob's blocks: %+v", rep)
	}
	for _, q := range []string{"by=year", "breakdown=colour", "tz=Mars/Olympus", "since=yesterday", "since=2026-03-02&until=2026-03-01"} {
		resp, b := e.request("GET", "/api/v1/usage?"+q, e.alice, nil)
		wantError(t, "usage "+q, resp, b, 400, "invalid")
	}
	resp, b := e.request("GET", "/api/v1/usage", "", nil)
	if resp.StatusCode != 401 {
		t.Fatalf("usage without a token: %d %s", resp.StatusCode, b)
	}
}
