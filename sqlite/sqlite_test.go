package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Opener {
		path := filepath.Join(t.TempDir(), "sessions.db")
		return func(t *testing.T) loom.Engine { return storetest.Must(sqlite.Open(context.Background(), path))(t) }
	}, func(t *testing.T, st loom.Store, sessionID string) {
		if _, err := st.(*sqlite.Store).DB().Exec(`UPDATE locks SET pid = ? WHERE session_id = ?`, conformance.DeadPID(t), sessionID); err != nil {
			t.Fatal(err)
		}
	})
}

func TestProjectMoveLog(t *testing.T) {
	conformance.RunProjectMoveLog(t, storetest.Must(sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sessions.db")))(t))
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

// An every-word query matching more than RankDepth messages ranks the
// newest of them and says its answer is partial.
func TestBroadSearchPartial(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.BroadSearchPartial(t, st, sqlite.RankDepth)
}

// A question's rare word finds its message first among 200,000 newer
// messages of its common word (issue 82's reproduction at a real
// user's size; the conformance suite runs it with 2,100).
func TestRareAmongCommon(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	conformance.RareAmongCommon(t, st, 200_000)
}

// Within a project, a question's rare word finds its message first when
// its common word is in more messages of another project than the engine
// walks at once (ScanDepth): the project's few matches are ranked all,
// by their ids, not joined to the filters, which in a store of a million
// messages took seconds and was refused.
func TestRareAmongCommonElsewhere(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	conformance.RareAmongCommonElsewhere(t, st, sqlite.ScanDepth+5000)
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
	storetest.SearchFewAmongMany(t, tempStore(t), sqlite.ScanDepth+100)
}

// tempStore opens a store in a new file, closed when the test ends.
func tempStore(t testing.TB) *sqlite.Store {
	return storetest.Must(sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sessions.db")))(t)
}

func TestVectors(t *testing.T) {
	storetest.Vectors(t, tempStore(t))
}
