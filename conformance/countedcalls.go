package conformance

import (
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// An import keeps which session counts each model call it read: the
// first session to count a call keeps it, a batch that fails keeps
// none of its calls, another user has calls of their own, and a purged
// session's calls go with it.
func testCountedCalls(t *testing.T, open Opener) {
	st := open(t)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	session := func(key string) *loom.SessionData {
		s, m := newSession("alice", key), text(loom.RoleUser, "hi")
		s.Source = &loom.Source{Tool: "claude-code", Path: "/p/" + key}
		s.CreatedAt, s.UpdatedAt, m.CreatedAt, m.Seq, m.ID = at, at, at, 1, key+"/1"
		m.Parts[0].ID = key + "/1/0"
		return &loom.SessionData{Session: s, Messages: []*loom.Message{m}}
	}
	first, second := session("claude-code:first"), session("claude-code:second")
	call := func(user, call string, s *loom.SessionData) loom.CountedCall {
		return loom.CountedCall{UserID: user, Call: call, SessionID: s.Session.ID}
	}
	if err := st.ApplyImport(ctx(t), &loom.ImportWrite{Sessions: []*loom.SessionData{first},
		Calls: []loom.CountedCall{call("alice", "claude-code:msg_1:req_1", first), call("alice", "claude-code:msg_2:req_2", first)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyImport(ctx(t), &loom.ImportWrite{Sessions: []*loom.SessionData{second},
		Calls: []loom.CountedCall{call("alice", "claude-code:msg_2:req_2", second), call("alice", "claude-code:msg_3:req_3", second),
			call("bob", "claude-code:msg_1:req_1", second)}}); err != nil {
		t.Fatal(err)
	}
	// A batch that fails (its session's key is taken) keeps no call.
	taken := session("claude-code:first")
	wantCode(t, st.ApplyImport(ctx(t), &loom.ImportWrite{Sessions: []*loom.SessionData{taken},
		Calls: []loom.CountedCall{call("alice", "claude-code:msg_4:req_4", taken)}}), loom.ECONFLICT)
	wantCode(t, st.ApplyImport(ctx(t), &loom.ImportWrite{Calls: []loom.CountedCall{{UserID: "alice", Call: "", SessionID: "x"}}}), loom.EINVALID)

	read := func(user string) map[string]string {
		t.Helper()
		got, err := st.CountingSessions(ctx(t), user, []string{"claude-code:msg_1:req_1", "claude-code:msg_2:req_2", "claude-code:msg_3:req_3",
			"claude-code:msg_4:req_4", "claude-code:never"})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	jsonEqual(t, "alice's calls", read("alice"), map[string]string{
		"claude-code:msg_1:req_1": first.Session.ID, "claude-code:msg_2:req_2": first.Session.ID, "claude-code:msg_3:req_3": second.Session.ID})
	jsonEqual(t, "bob's calls", read("bob"), map[string]string{"claude-code:msg_1:req_1": second.Session.ID})
	if got, err := st.CountingSessions(ctx(t), "alice", nil); err != nil || len(got) != 0 {
		t.Errorf("no calls: %v, %v", got, err)
	}

	// In the trash, a session still counts its calls; purged, it counts none.
	if _, err := st.Delete(ctx(t), first.Session.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := read("alice"); got["claude-code:msg_1:req_1"] != first.Session.ID {
		t.Errorf("in the trash: %v", got)
	}
	if _, err := st.Delete(ctx(t), first.Session.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, "after the purge", read("alice"), map[string]string{"claude-code:msg_3:req_3": second.Session.ID})
}
