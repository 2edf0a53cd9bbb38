package conformance

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Activity counts a user's prompts per quarter hour and their agents'
// tool calls by tool, with the failed ones; a fork's inherited history,
// the trash and other users are not counted; the range and the project
// bound it.
func testActivity(t *testing.T, open Opener) {
	st := open(t)
	ar := optional(t, st, "Activity", st.Optional().Activity)
	day := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	at := func(m *loom.Message, d time.Duration) *loom.Message {
		m.CreatedAt = day.Add(d)
		return m
	}
	tool := func(id, name, status string) loom.Part {
		return loom.Part{Type: loom.PartTool, CallID: id, Name: name, Status: status, Input: json.RawMessage(`{}`)}
	}
	calls := func(d time.Duration, ps ...loom.Part) *loom.Message {
		return at(&loom.Message{Role: loom.RoleAssistant, Parts: ps}, d)
	}
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s,
		at(text(loom.RoleUser, "one"), 1*time.Minute),
		calls(2*time.Minute, tool("c1", "Bash", loom.ToolCompleted), tool("c2", "Read", loom.ToolCompleted)),
		at(text(loom.RoleUser, "two"), 14*time.Minute),
		calls(20*time.Minute, tool("c3", "Bash", loom.ToolError)),
		at(text(loom.RoleUser, "three"), 26*time.Hour),
		calls(26*time.Hour+time.Minute, tool("c4", "Bash", loom.ToolCompleted)))
	// A fork's inherited turns are counted once; what it adds counts.
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, f, at(text(loom.RoleUser, "in the fork"), 50*time.Hour),
		calls(50*time.Hour+time.Minute, tool("c5", "Edit", loom.ToolError)))
	// Another project of alice's, another user's, and the trash.
	o := newSession("alice", "cli:web")
	o.Project = loom.Project{ID: "fedcba9876543210", Name: "web", Root: "/src/web"}
	mustAppend(t, st, o, at(text(loom.RoleUser, "web"), 2*time.Minute), calls(3*time.Minute, tool("w1", "Read", loom.ToolCompleted)))
	mustAppend(t, st, newSession("bob", "cli:api"), at(text(loom.RoleUser, "bob's"), time.Minute), calls(2*time.Minute, tool("b1", "Bash", loom.ToolError)))
	gone := newSession("alice", "cli:gone")
	mustAppend(t, st, gone, at(text(loom.RoleUser, "gone"), time.Minute), calls(2*time.Minute, tool("g1", "Bash", loom.ToolError)))
	if _, err := st.Delete(ctx(t), gone.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	read := func(f loom.ActivityFilter) *loom.Activity {
		t.Helper()
		a, err := ar.Activity(ctx(t), f)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	slice := func(d time.Duration, s *loom.Session, n int64) loom.ActivitySlice {
		return loom.ActivitySlice{Start: day.Add(d), SessionID: s.ID, Count: n}
	}
	a := read(loom.ActivityFilter{UserID: "alice"})
	// 09:01 and 09:14 in api, 09:02 in web: one quarter hour.
	wantPrompts := []loom.ActivitySlice{slice(0, s, 2), slice(0, o, 1), slice(26*time.Hour, s, 1), slice(50*time.Hour, f, 1)}
	if s.ID > o.ID {
		wantPrompts[0], wantPrompts[1] = wantPrompts[1], wantPrompts[0]
	}
	if !reflect.DeepEqual(a.Prompts, wantPrompts) {
		t.Errorf("prompts = %+v, want %+v", a.Prompts, wantPrompts)
	}
	// The fork holds what it added: one prompt and one reply.
	wantSessions := map[string]loom.SessionActivity{
		s.ID: {SessionID: s.ID, Messages: 6, Prompts: 3, FirstPrompt: day.Add(time.Minute), LastReply: day.Add(26*time.Hour + time.Minute)},
		f.ID: {SessionID: f.ID, Messages: 2, Prompts: 1, FirstPrompt: day.Add(50 * time.Hour), LastReply: day.Add(50*time.Hour + time.Minute)},
		o.ID: {SessionID: o.ID, Messages: 2, Prompts: 1, FirstPrompt: day.Add(2 * time.Minute), LastReply: day.Add(3 * time.Minute)},
	}
	if len(a.Sessions) != len(wantSessions) {
		t.Errorf("sessions = %+v, want %d", a.Sessions, len(wantSessions))
	}
	for i, got := range a.Sessions {
		if i > 0 && a.Sessions[i-1].SessionID >= got.SessionID {
			t.Errorf("sessions out of order: %+v", a.Sessions)
		}
		w := wantSessions[got.SessionID]
		if got.Messages != w.Messages || got.Prompts != w.Prompts || !got.FirstPrompt.Equal(w.FirstPrompt) || !got.LastReply.Equal(w.LastReply) {
			t.Errorf("session %+v, want %+v", got, w)
		}
	}
	wantTools := []loom.ToolCount{{Name: "Bash", Calls: 3, Errors: 1}, {Name: "Read", Calls: 2}, {Name: "Edit", Calls: 1, Errors: 1}}
	if !reflect.DeepEqual(a.Tools, wantTools) {
		t.Errorf("tools = %+v, want %+v", a.Tools, wantTools)
	}

	// One project, and a range: [09:00 the next day, 09:00 the day after).
	a = read(loom.ActivityFilter{UserID: "alice", ProjectID: s.Project.ID, Since: day.Add(24 * time.Hour), Until: day.Add(48 * time.Hour)})
	if !reflect.DeepEqual(a.Prompts, []loom.ActivitySlice{slice(26*time.Hour, s, 1)}) || len(a.Sessions) != 1 || a.Sessions[0].Messages != 2 ||
		!reflect.DeepEqual(a.Tools, []loom.ToolCount{{Name: "Bash", Calls: 1}}) {
		t.Errorf("api on the second day: %+v", a)
	}
	if a := read(loom.ActivityFilter{UserID: "carol"}); len(a.Prompts) != 0 || len(a.Tools) != 0 || len(a.Sessions) != 0 {
		t.Errorf("a user without sessions: %+v", a)
	}
	_, err = ar.Activity(ctx(t), loom.ActivityFilter{UserID: "alice", Since: day, Until: day})
	wantCode(t, err, loom.EINVALID)
}
