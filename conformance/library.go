package conformance

import (
	"fmt"
	"testing"

	"github.com/loomhq/loom"
)

// §3.12: the library API, used the way an agent written in Go uses it:
// open, append (creating lazily), read newest-N and page back, list,
// search, fork, rename, delete and restore, lock.
func testLibraryAPI(t *testing.T, open Opener) {
	st := open(t)
	s := &loom.Session{ID: loom.NewID(), UserID: "agent", Key: "http:bot"}
	lease, err := st.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx(t))
	for i := 1; i <= 30; i++ {
		mustAppend(t, st, s, text(loom.RoleUser, fmt.Sprintf("question %d about turbines", i)), text(loom.RoleAssistant, fmt.Sprintf("answer %d", i)))
	}
	if s.MessageCount != 60 || s.Surface != "http" || s.Title != "question 1 about turbines" {
		t.Fatalf("session after appends = %+v", s)
	}
	page := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 20})
	checkSeqs(t, page, 41)
	older := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 20, Before: page[0].Seq})
	checkSeqs(t, older, 21)
	list, err := st.Sessions(ctx(t), loom.SessionFilter{UserID: "agent", Surface: "http"})
	if err != nil || len(list) != 1 || list[0].ID != s.ID {
		t.Fatalf("list = %v, %v", list, err)
	}
	hits, err := st.Search(ctx(t), loom.SearchQuery{Text: "turbines 7", UserID: "agent", Exact: true})
	if err != nil || len(hits) != 1 || hits[0].Seq != 13 {
		t.Fatalf("search = %+v, %v", hits, err)
	}
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{Turn: 10, Title: "branch"})
	if err != nil || f.TurnCount != 10 {
		t.Fatalf("fork = %+v, %v", f, err)
	}
	title := "Turbine talk"
	if _, err := st.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Resolve(ctx(t), "turbine TALK", loom.ResolveScope{UserID: "agent"}); err != nil || got.ID != s.ID {
		t.Fatalf("resolve by new title = %v", err)
	}
	if _, err := st.Delete(ctx(t), f.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Restore(ctx(t), f.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Session(ctx(t), f.ID); got.DeletedAt != nil {
		t.Fatalf("restored fork still deleted")
	}
}
