package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// After a bulk import the search index is merged (loom.IndexMerger): the
// same searches find the same messages, the index checks out whole, the
// store takes appends that are found too, and a second merge has
// nothing left to do.
func TestMergeIndex(t *testing.T) {
	ctx := context.Background()
	st := tempStore(t)
	for b := 0; b < 5; b++ {
		var batch []*loom.SessionData
		for i := 0; i < 4; i++ {
			now := time.Now()
			s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: fmt.Sprintf("cli:merge:%d:%d", b, i), Kind: loom.KindMain,
				CreatedAt: now, UpdatedAt: now, MessageCount: 200, TurnCount: 200}
			d := &loom.SessionData{Session: s}
			for j := 1; j <= 200; j++ {
				d.Messages = append(d.Messages, &loom.Message{ID: loom.NewID(), SessionID: s.ID, Seq: int64(j), Role: loom.RoleUser, Turn: j, CreatedAt: now,
					Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: fmt.Sprintf("batch%d session%d message%d lighthouse", b, i, j)}}})
			}
			batch = append(batch, d)
		}
		if err := st.Import(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	count := func(q string) int {
		t.Helper()
		hits, err := st.Search(ctx, loom.SearchQuery{Text: q, UserID: "local", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}
	before := []int{count("lighthouse"), count("batch3"), count("message17")}
	// Each import wrote segments of its own; the merge leaves fewer.
	segments := func() (n int) {
		st.DB().QueryRow(`SELECT count(DISTINCT segid) FROM bodies_fts_idx`).Scan(&n)
		return n
	}
	imported := segments()
	if err := st.MergeIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if merged := segments(); merged >= imported {
		t.Errorf("%d segments after the merge, %d before", merged, imported)
	}
	if after := []int{count("lighthouse"), count("batch3"), count("message17")}; fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("hits before the merge %v, after %v", before, after)
	}
	checkIntegrity(t, st)
	s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:merge:after"}
	if err := st.Append(ctx, s, msg("appended after the merge: zeppelin")); err != nil {
		t.Fatal(err)
	}
	if count("zeppelin") != 1 {
		t.Fatal("an append after the merge is not found")
	}
	var before2, after2 int64
	st.DB().QueryRow(`SELECT count(*) FROM bodies_fts_data`).Scan(&before2)
	if err := st.MergeIndex(ctx); err != nil {
		t.Fatal(err)
	}
	st.DB().QueryRow(`SELECT count(*) FROM bodies_fts_data`).Scan(&after2)
	if before2 == 0 || after2 > before2 {
		t.Fatalf("index rows %d before a second merge, %d after", before2, after2)
	}
	checkIntegrity(t, st)
}
