package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// PATCH {"archived": true} hides a session from the list and default
// search; ?archived=true lists it; false brings it back. Another user
// cannot archive it.
func TestArchiveAPI(t *testing.T) {
	e := newEnv(t)
	s := e.seed(&loom.Session{UserID: "alice", Key: "http:old", Title: "Old"}, userMsg("ancient aardvark"))
	live := e.seed(&loom.Session{UserID: "alice", Key: "http:new", Title: "New"}, userMsg("young aardvark"))
	ids := func(path string) []string {
		t.Helper()
		var page struct{ Sessions []*loom.Session }
		e.getJSON(path, e.alice, &page)
		var out []string
		for _, x := range page.Sessions {
			out = append(out, x.ID)
		}
		return out
	}
	resp, b := e.request("PATCH", "/api/v1/sessions/"+s.ID, e.bob, map[string]bool{"archived": true})
	wantError(t, "another user's session", resp, b, 404, "not_found")
	resp, b = e.request("PATCH", "/api/v1/sessions/"+s.ID, e.alice, map[string]bool{"archived": true})
	var got map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &got) != nil || got["archived_at"] == nil {
		t.Fatalf("PATCH archived: %d %s", resp.StatusCode, b)
	}
	if l := ids("/api/v1/sessions"); len(l) != 1 || l[0] != live.ID {
		t.Fatalf("list after archive = %v", l)
	}
	if l := ids("/api/v1/sessions?archived=true"); len(l) != 1 || l[0] != s.ID {
		t.Fatalf("archived list = %v", l)
	}
	var hits struct{ Hits []loom.SearchHit }
	e.getJSON("/api/v1/search?q=aardvark", e.alice, &hits)
	if len(hits.Hits) != 1 || hits.Hits[0].SessionID != live.ID {
		t.Fatalf("default search = %+v", hits.Hits)
	}
	e.getJSON("/api/v1/search?q=aardvark&archived=true", e.alice, &hits)
	if len(hits.Hits) != 2 {
		t.Fatalf("search with archived = %+v", hits.Hits)
	}
	resp, b = e.request("PATCH", "/api/v1/sessions/"+s.ID, e.alice, map[string]bool{"archived": false})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("unarchive: %d %s", resp.StatusCode, b)
	}
	if l := ids("/api/v1/sessions"); len(l) != 2 {
		t.Fatalf("list after unarchive = %v", l)
	}
}

// POST /api/v1/sessions/{id}/rewind takes the session back and answers
// with it and the fork holding the later turns; a turn out of range is
// 400, another user's session 404.
func TestRewindAPI(t *testing.T) {
	e := newEnv(t)
	s := e.seed(&loom.Session{UserID: "alice", Key: "http:r", Title: "Plan"},
		userMsg("q1"), assistantMsg("a1"), userMsg("q2"), assistantMsg("a2"), userMsg("q3"), assistantMsg("a3"))
	resp, b := e.request("POST", "/api/v1/sessions/"+s.ID+"/rewind", e.bob, map[string]int{"turn": 1})
	wantError(t, "another user's session", resp, b, 404, "not_found")
	resp, b = e.request("POST", "/api/v1/sessions/"+s.ID+"/rewind", e.alice, map[string]int{"turn": 3})
	wantError(t, "the last turn", resp, b, 400, "invalid")
	resp, b = e.request("POST", "/api/v1/sessions/"+s.ID+"/rewind", e.alice, map[string]int{"turn": 1})
	var out struct{ Session, Fork *loom.Session }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil {
		t.Fatalf("rewind: %d %s", resp.StatusCode, b)
	}
	if out.Session.ID != s.ID || out.Session.TurnCount != 1 || out.Fork.ParentID != s.ID || out.Fork.ForkTurn != 1 || out.Fork.MessageCount != 6 {
		t.Fatalf("rewind answered %+v / %+v", out.Session, out.Fork)
	}
}

// The session page's Rewind form: the page shows it for a session of
// several turns, the post takes the session back and returns to its
// page; a turn out of range, or bob, change nothing.
func TestRewindFromPage(t *testing.T) {
	e := newEnv(t)
	s := e.seed(&loom.Session{UserID: "alice", Key: "http:p", Title: "Paged"},
		userMsg("q1"), assistantMsg("a1"), userMsg("q2"), assistantMsg("a2"))
	page := e.send("GET", "/s/"+s.ID, "", "", cookieOf(e.alice))
	b, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if !strings.Contains(string(b), `action="/s/`+s.ID+`/rewind"`) {
		t.Fatalf("the session page has no rewind form (%d)", page.StatusCode)
	}
	path := "/s/" + s.ID + "/rewind"
	if r, _ := e.form(path, e.bob, url.Values{"turn": {"1"}}); r.StatusCode != 404 {
		t.Fatalf("bob rewinds: %d", r.StatusCode)
	}
	if r, _ := e.form(path, e.alice, url.Values{"turn": {"2"}}); r.StatusCode != 400 {
		t.Fatalf("rewind to the last turn: %d", r.StatusCode)
	}
	r, _ := e.form(path, e.alice, url.Values{"turn": {"1"}})
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/s/"+s.ID+"?rewound=") {
		t.Fatalf("rewind: %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
	if got, _ := e.st.Session(context.Background(), s.ID); got.TurnCount != 1 {
		t.Fatalf("after the page's rewind: %d turns", got.TurnCount)
	}
}
