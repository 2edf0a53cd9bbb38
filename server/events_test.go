package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/sqlite"
)

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
	idleFor(t, evs, 300*time.Millisecond)

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
