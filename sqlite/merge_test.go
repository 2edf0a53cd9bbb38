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
// store takes appends that are found too, and a merge of a merged index
// changes nothing.
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
		t.Helper()
		if err := st.DB().QueryRow(`SELECT count(DISTINCT segid) FROM bodies_fts_idx`).Scan(&n); err != nil {
			t.Fatal(err)
		}
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
	// The index as its rows hold it: how many, and their bytes.
	index := func() string {
		t.Helper()
		var rows, size int64
		if err := st.DB().QueryRow(`SELECT count(*), coalesce(sum(length(block)), 0) FROM bodies_fts_data`).Scan(&rows, &size); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d rows, %d bytes, %d segments", rows, size, segments())
	}
	before2 := index()
	if err := st.MergeIndex(ctx); err != nil {
		t.Fatal(err)
	}
	after2 := index()
	if err := st.MergeIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if again := index(); again != after2 {
		t.Fatalf("a merge of a merged index changed it: %s before, %s after (%s before the second merge)", after2, again, before2)
	}
	checkIntegrity(t, st)
}
