package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/internal/storetest"
	"github.com/loomhq/loom/sqlite"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Opener {
		path := filepath.Join(t.TempDir(), "sessions.db")
		return func(t *testing.T) loom.Store { return storetest.Must(sqlite.Open(context.Background(), path))(t) }
	}, func(t *testing.T, st loom.Store, sessionID string) {
		if _, err := st.(*sqlite.Store).DB().Exec(`UPDATE locks SET pid = ? WHERE session_id = ?`, conformance.DeadPID(t), sessionID); err != nil {
			t.Fatal(err)
		}
	})
}

func TestLease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	conformance.RunLease(t, func(t *testing.T, ttl time.Duration) loom.Store {
		st := storetest.Must(sqlite.Open(context.Background(), path))(t)
		if ttl > 0 {
			st.LeaseTTL = ttl
		}
		return st
	})
}

// A query matching more than RankDepth messages returns its newest
// matches first, with scores that still sort best first.
func TestBroadSearchNewestFirst(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &loom.Session{ID: loom.NewID(), UserID: "u", Key: "cli:broad"}
	var batch []*loom.Message
	for i := 0; i < sqlite.RankDepth+100; i++ {
		batch = append(batch, msg(fmt.Sprintf("common words everywhere %d", i)))
	}
	if err := st.Append(ctx, s, batch...); err != nil {
		t.Fatal(err)
	}
	hits, err := st.Search(ctx, loom.SearchQuery{Text: "common words", UserID: "u", Limit: 5})
	if err != nil || len(hits) != 5 {
		t.Fatalf("broad search = %d hits, %v", len(hits), err)
	}
	for i, h := range hits {
		if h.Seq != int64(sqlite.RankDepth+100-i) {
			t.Fatalf("hit %d has seq %d, want the newest first", i, h.Seq)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Fatalf("scores not descending: %+v", hits)
		}
		if !strings.Contains(h.Snippet, "**common**") {
			t.Fatalf("snippet %q", h.Snippet)
		}
	}
	// Within one session the same holds.
	if hits, err := st.Search(ctx, loom.SearchQuery{Text: "everywhere", SessionID: s.ID, Limit: 3}); err != nil || len(hits) != 3 || hits[0].Seq != int64(sqlite.RankDepth+100) {
		t.Fatalf("broad search in a session = %+v, %v", hits, err)
	}
}

// A prefix search in a raw query needs MinPrefix letters: FTS5 reads
// every word with a shorter prefix at once, in one step no cancellation
// stops.
func TestRawPrefix(t *testing.T) {
	ctx := context.Background()
	st := tempStore(t)
	if err := st.Append(ctx, &loom.Session{ID: loom.NewID(), UserID: "u", Key: "cli:x"}, msg("configure the connection pool")); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"a*", "co*", `"co"*`, "pool OR c*", "foo_a*", `"one tw"*`, "*", "( *"} {
		_, err := st.Search(ctx, loom.SearchQuery{Text: q, Raw: true, UserID: "u"})
		if loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("raw %q = %v, want an invalid-input error", q, err)
		}
	}
	for _, q := range []string{"con*", `"con"*`, "pool AND con*", `"the connection"*`} {
		hits, err := st.Search(ctx, loom.SearchQuery{Text: q, Raw: true, UserID: "u"})
		if err != nil || len(hits) != 1 {
			t.Errorf("raw %q = %+v, %v", q, hits, err)
		}
	}
}

// A user whose matches are few among many newer ones of other users
// finds them: the newest ScanDepth matches are looked through, then the
// user's own messages.
func TestSearchFewAmongMany(t *testing.T) {
	ctx := context.Background()
	st := tempStore(t)
	few := &loom.Session{ID: loom.NewID(), UserID: "few", Key: "cli:few"}
	if err := st.Append(ctx, few, msg("a common word and a needle"), msg("another common word")); err != nil {
		t.Fatal(err)
	}
	crowd := &loom.Session{ID: loom.NewID(), UserID: "crowd", Key: "cli:crowd", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	var msgs []*loom.Message
	for i := 1; i <= sqlite.ScanDepth+100; i++ {
		m := msg(fmt.Sprintf("common word number %d", i))
		m.ID, m.Seq, m.CreatedAt = loom.NewID(), int64(i), crowd.CreatedAt
		m.Parts[0].ID = loom.NewID()
		msgs = append(msgs, m)
	}
	if err := st.Import(ctx, []*loom.SessionData{{Session: crowd, Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    loom.SearchQuery
		want int
	}{
		{loom.SearchQuery{Text: "common word", UserID: "few"}, 2},
		{loom.SearchQuery{Text: `"common word" needle`, UserID: "few"}, 1},
		{loom.SearchQuery{Text: "common", UserID: "few", Role: loom.RoleAssistant}, 0},
		{loom.SearchQuery{Text: "common", UserID: "crowd", Limit: 5}, 5},
		{loom.SearchQuery{Text: "common", UserID: "crowd", Role: loom.RoleAssistant}, 0},
		{loom.SearchQuery{Text: "common", Role: loom.RoleUser, Since: crowd.CreatedAt.Add(-time.Hour), Limit: 3}, 3},
	} {
		hits, err := st.Search(ctx, tc.q)
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

// tempStore opens a store in a new file, closed when the test ends.
func tempStore(t testing.TB) *sqlite.Store {
	return storetest.Must(sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sessions.db")))(t)
}
