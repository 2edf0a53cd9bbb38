package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/internal/workload"
	"github.com/loomhq/loom/sqlite"
)

// benchStore is a store with one session of n messages, imported once per
// benchmark binary run and shared by the read benchmarks.
func benchStore(b *testing.B, n int) (*sqlite.Store, *loom.Session) {
	b.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "sessions.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	s := &loom.Session{ID: loom.NewID(), UserID: "bench", Key: "cli:bench", Kind: loom.KindMain, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	msgs := make([]*loom.Message, n)
	for i := range msgs {
		text := workload.Text(i)
		if i%997 == 0 {
			text += "zyzzogeton"
		}
		msgs[i] = workload.Message(i, text, time.Now())
	}
	if err := st.Import(ctx, []*loom.SessionData{{Session: s, Messages: msgs}}); err != nil {
		b.Fatal(err)
	}
	return st, s
}

// BenchmarkList50 lists the 50 most recent of 200 sessions, whole
// (Sessions) and as a listing shows them (Summaries).
func BenchmarkList50(b *testing.B) {
	st, _ := benchStore(b, 100)
	ctx := context.Background()
	for i := 0; i < 200; i++ {
		x := &loom.Session{ID: loom.NewID(), UserID: "bench", Key: fmt.Sprintf("cli:%d", i)}
		if err := st.Append(ctx, x, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "prompt"}}}); err != nil {
			b.Fatal(err)
		}
	}
	f := loom.SessionFilter{UserID: "bench", Limit: 50}
	b.Run("Sessions", func(b *testing.B) {
		for b.Loop() {
			if l, err := st.Sessions(ctx, f); err != nil || len(l) != 50 {
				b.Fatal(err)
			}
		}
	})
	b.Run("Summaries", func(b *testing.B) {
		for b.Loop() {
			if l, err := st.Summaries(ctx, f); err != nil || len(l) != 50 {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSearchRare(b *testing.B) {
	st, _ := benchStore(b, 20000)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if h, err := st.Search(ctx, loom.SearchQuery{Text: "zyzzogeton", UserID: "bench"}); err != nil || len(h) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkLongSession measures newest-N, fork, rewind and append on a
// session of 100,000 messages (2,000 under -short); see
// storetest.LongSession.
func BenchmarkLongSession(b *testing.B) {
	storetest.LongSession(b, tempStore(b), nil)
}

// BenchmarkFamily10k reads the lineage of 10,000 sessions (2,500 trees
// of a session, its fork, its sub-agent and the sub-agent's own) in one
// call, as session list --tree does.
func BenchmarkFamily10k(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "sessions.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	at := time.Now().Add(-time.Hour)
	var data []*loom.SessionData
	var roots []string
	mk := func(kind, parent string) *loom.Session {
		at = at.Add(time.Millisecond)
		s := &loom.Session{ID: loom.NewID(), UserID: "bench", Kind: kind, ParentID: parent, CreatedAt: at, UpdatedAt: at}
		data = append(data, &loom.SessionData{Session: s})
		return s
	}
	for i := 0; i < 2500; i++ {
		m := mk(loom.KindMain, "")
		roots = append(roots, m.ID)
		mk(loom.KindFork, m.ID)
		mk(loom.KindSubagent, mk(loom.KindSubagent, m.ID).ID)
	}
	if err := st.Import(ctx, data); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if f, err := st.Family(ctx, loom.FamilyQuery{IDs: roots, UserID: "bench"}); err != nil || len(f) != 10000 {
			b.Fatalf("family = %d sessions, %v", len(f), err)
		}
	}
}
