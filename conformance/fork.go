package conformance

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/loomhq/loom"
)

// §3.7: a fork holds turns 1..N with lineage and is independent of its
// source: writing either, even a message the fork inherits, never
// changes the other.
func testFork(t *testing.T, open Opener) {
	st := open(t)
	s := sessionOfTurns(t, st, "original", 4, func(_ int, msgs []*loom.Message) {
		// A file attached to the prompt is searchable but is not the
		// prompt's text.
		msgs[0].Parts = append(msgs[0].Parts, loom.Part{Type: loom.PartFile, Mime: "text/plain", Filename: "attached.txt", URL: "file:///attached.txt"})
	})
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{Turn: 2, Title: "my-fix"})
	if err != nil {
		t.Fatal(err)
	}
	checkFork(t, st, s, f)
	// Both are searchable, and writing to the fork leaves the parent alone.
	mustAppend(t, st, f, text(loom.RoleUser, "only in the fork"))
	if got, _ := st.Session(ctx(t), s.ID); got.MessageCount != 8 {
		t.Fatalf("parent changed: %d messages", got.MessageCount)
	}
	// The message is one hit, in the parent, naming the fork.
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "question 1", UserID: "alice", Exact: true}); len(hits) != 1 || hits[0].SessionID != s.ID || !slices.Equal(hits[0].AlsoIn, []string{f.ID}) {
		t.Fatalf("search over fork and parent = %+v", hits)
	}
	f2 := forkUpdatesCopy(t, st, s)
	// Default titles stay unique, so each names one session: a fork of a
	// fork counts on from the same base; other users' titles don't count.
	other := newSession("bob", "cli:api")
	other.Title = "original (fork 2)"
	mustAppend(t, st, other, text(loom.RoleUser, "bob's"))
	for _, tc := range []struct{ from, want string }{{s.ID, "original (fork 2)"}, {f2.ID, "original (fork 3)"}} {
		fk, err := st.Fork(ctx(t), tc.from, loom.ForkOptions{Turn: 1})
		if err != nil || fk.Title != tc.want {
			t.Fatalf("default fork title = %v, %v; want %q", fk, err, tc.want)
		}
	}
	// Deleting the parent leaves the fork whole.
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if msgs := mustMessages(t, st, f.ID, loom.MessageQuery{}); len(msgs) != 5 || msgs[0].Text() != "question 1" {
		t.Fatalf("fork after parent purge = %d messages", len(msgs))
	}
	// f and f2 both hold it: one hit, in the older, naming the other.
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "answer 2", UserID: "alice", Exact: true}); len(hits) != 1 || hits[0].SessionID != f.ID || !slices.Equal(hits[0].AlsoIn, []string{f2.ID}) {
		t.Fatalf("fork's messages no longer searchable after parent purge: %+v", hits)
	}
	_, err = st.Fork(ctx(t), f.ID, loom.ForkOptions{Turn: 9})
	wantCode(t, err, loom.EINVALID)
	_, err = st.Fork(ctx(t), loom.NewID(), loom.ForkOptions{})
	wantCode(t, err, loom.ENOTFOUND)
}

// checkFork: f, s's fork at turn 2, counts what it holds and holds s's
// messages themselves.
func checkFork(t *testing.T, st loom.Store, s, f *loom.Session) {
	if f.Kind != loom.KindFork || f.ParentID != s.ID || f.ForkTurn != 2 || f.Title != "my-fix" || f.ID == s.ID {
		t.Fatalf("fork = %+v", f)
	}
	if f.MessageCount != 4 || f.TurnCount != 2 || f.LastPrompt != "question 2" || f.Project != s.Project || f.UserID != "alice" {
		t.Fatalf("fork counters = %+v", f)
	}
	msgs := mustMessages(t, st, f.ID, loom.MessageQuery{})
	checkSeqs(t, msgs, 1)
	orig := mustMessages(t, st, s.ID, loom.MessageQuery{})
	for i, m := range msgs {
		// The fork holds the same messages, not copies: they keep their
		// ids (as an imported fork's do), read as the fork's.
		if m.Text() != orig[i].Text() || m.Role != orig[i].Role || !m.CreatedAt.Equal(orig[i].CreatedAt) || m.SessionID != f.ID || m.ID != orig[i].ID {
			t.Fatalf("fork message %d = %+v, original %+v", i, m, orig[i])
		}
	}
}

// forkUpdatesCopy: updating a part a fork of all of s holds changes the
// fork only; it returns that fork.
func forkUpdatesCopy(t *testing.T, st loom.Store, s *loom.Session) *loom.Session {
	// Updating a copied part changes the fork only.
	tool := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartTool, CallID: "c", Name: "read_file", Status: loom.ToolRunning}}}
	mustAppend(t, st, s, tool)
	f2, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f2.TurnCount != 4 || f2.MessageCount != 9 || f2.Title != "original (fork)" {
		t.Fatalf("fork of everything = %+v", f2)
	}
	p := tool.Parts[0]
	p.Status, p.Output = loom.ToolCompleted, json.RawMessage(`"fork result"`)
	if err := st.UpdatePart(ctx(t), f2.ID, 9, p); err != nil {
		t.Fatal(err)
	}
	if m := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 1}); m[0].Parts[0].Status != loom.ToolRunning {
		t.Fatalf("updating the fork changed the parent: %+v", m[0].Parts[0])
	}
	if m := mustMessages(t, st, f2.ID, loom.MessageQuery{Limit: 1}); m[0].Parts[0].Status != loom.ToolCompleted {
		t.Fatalf("fork part not updated: %+v", m[0].Parts[0])
	}
	return f2
}
