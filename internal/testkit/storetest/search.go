package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// SearchFewAmongMany checks, on every engine, that a user whose matches
// are few among crowd newer ones of another user finds them, whether or
// not the query is broad for the store as a whole; crowd is how many
// matches make a query broad for the engine, and some more.
func SearchFewAmongMany(t *testing.T, st loom.Store, crowd int) {
	t.Helper()
	ctx := context.Background()
	text := func(s string) *loom.Message {
		return &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: s}}}
	}
	few := &loom.Session{ID: loom.NewID(), UserID: "few", Key: "cli:few"}
	if err := st.Append(ctx, few, text("a common word and a needle"), text("another common word")); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	s := &loom.Session{ID: loom.NewID(), UserID: "crowd", Key: "cli:crowd", Kind: loom.KindMain,
		MessageCount: crowd, TurnCount: crowd, CreatedAt: t0, UpdatedAt: t0}
	d := &loom.SessionData{Session: s}
	for i := 1; i <= crowd; i++ {
		d.Messages = append(d.Messages, &loom.Message{ID: loom.NewID(), SessionID: s.ID, Seq: int64(i), Role: loom.RoleUser, Turn: i,
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: fmt.Sprintf("common word number %d", i)}}, CreatedAt: t0})
	}
	if err := st.Import(ctx, []*loom.SessionData{d}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    loom.SearchQuery
		want int
	}{
		{loom.SearchQuery{Text: "common word", UserID: "few"}, 2},
		{loom.SearchQuery{Text: `"common word" needle`, UserID: "few", Exact: true}, 1},
		{loom.SearchQuery{Text: "common", UserID: "few", Role: loom.RoleAssistant}, 0},
		{loom.SearchQuery{Text: "common", UserID: "crowd", Limit: 5}, 5},
		{loom.SearchQuery{Text: "common", UserID: "crowd", Role: loom.RoleAssistant}, 0},
		{loom.SearchQuery{Text: "common", Role: loom.RoleUser, Since: t0.Add(-time.Hour), Limit: 3}, 3},
	} {
		// A search refused for running out of time (the machine busy
		// beyond its budget) is no answer, right or wrong: it is asked
		// again; what is checked is the answer.
		hits, err := st.Search(ctx, tc.q)
		for try := 1; errors.Is(err, loom.ErrSearchTime) && try < 10; try++ {
			hits, err = st.Search(ctx, tc.q)
		}
		if err != nil || len(hits) != tc.want {
			t.Errorf("search %+v = %d hits, %v; want %d", tc.q, len(hits), err, tc.want)
		}
		for _, h := range hits {
			if tc.q.UserID == "few" && h.SessionID != few.ID {
				t.Errorf("search %+v found another user's message", tc.q)
			}
		}
	}
}

// BroadSearchPartial checks, on every engine, that an every-word query
// matching more than the engine's rankDepth messages, none of its words
// rarer than that, says its answer is partial: ranking every match of
// words in most messages is too much work for a search, so the newest
// rankDepth of them are ranked (here they tie, newest first), and never
// passed off as the best of all. Within a session too; and a rarer word
// among them is ranked in full, not partial. (A query with a rare word
// among common ones is ranked in full: conformance.RareAmongCommon.)
func BroadSearchPartial(t *testing.T, st loom.Store, rankDepth int) {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := rankDepth + 100
	s := &loom.Session{ID: loom.NewID(), UserID: "u", Key: "cli:broad", Kind: loom.KindMain, MessageCount: n, TurnCount: n,
		CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(n) * time.Second)}
	d := &loom.SessionData{Session: s}
	for i := 1; i <= n; i++ {
		d.Messages = append(d.Messages, &loom.Message{ID: loom.NewID(), SessionID: s.ID, Seq: int64(i), Role: loom.RoleUser, Turn: i,
			Parts:     []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: fmt.Sprintf("common words everywhere %d", i)}},
			CreatedAt: t0.Add(time.Duration(i) * time.Second)})
	}
	if err := st.Import(ctx, []*loom.SessionData{d}); err != nil {
		t.Fatal(err)
	}
	hits, err := st.Search(ctx, loom.SearchQuery{Text: "common words", UserID: "u", Limit: 5})
	if err != nil || len(hits) != 5 {
		t.Fatalf("broad search = %d hits, %v", len(hits), err)
	}
	for i, h := range hits {
		if h.Seq != int64(n-i) {
			t.Fatalf("hit %d has seq %d, want the newest first among equals", i, h.Seq)
		}
		if i > 0 && h.Score > hits[i-1].Score || h.Score <= 0 {
			t.Fatalf("scores not descending: %+v", hits)
		}
		if !h.Partial {
			t.Fatalf("hit %d of a search that ranked part of its matches is not partial: %+v", i, h)
		}
		if !strings.Contains(h.Snippet, "**common**") {
			t.Fatalf("snippet %q", h.Snippet)
		}
	}
	// Within one session the same holds.
	if hits, err := st.Search(ctx, loom.SearchQuery{Text: "everywhere", SessionID: s.ID, Limit: 3}); err != nil || len(hits) != 3 || hits[0].Seq != int64(n) || !loom.Partial(hits) {
		t.Fatalf("broad search in a session = %+v, %v", hits, err)
	}
	// A rarer word among them is ranked.
	if hits, err := st.Search(ctx, loom.SearchQuery{Text: "common 1234", UserID: "u", Exact: true}); err != nil || len(hits) != 1 || hits[0].Seq != 1234 || hits[0].Partial {
		t.Fatalf("narrow search = %+v, %v", hits, err)
	}
}
