package conformance

import (
	"fmt"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Import stores sessions exactly, or nothing at all.
func testImport(t *testing.T, open Opener) {
	st := open(t)
	src := newSession("alice", "cli:api")
	src.Title = "imported"
	created := time.Date(2025, 5, 1, 10, 0, 0, 123e6, time.UTC)
	src.CreatedAt, src.UpdatedAt = created, created.Add(time.Hour)
	src.Usage = loom.Usage{InputTokens: 7, CostUSD: 0.5}
	var msgs []*loom.Message
	for i := 1; i <= 4; i++ {
		role := loom.RoleUser
		if i%2 == 0 {
			role = loom.RoleAssistant
		}
		m := text(role, fmt.Sprintf("imported text %d", i))
		m.ID, m.Seq, m.CreatedAt = loom.NewID(), int64(i), created.Add(time.Duration(i)*time.Minute)
		m.Parts[0].ID = loom.NewID()
		msgs = append(msgs, m)
	}
	child := newSession("alice", "")
	child.Kind, child.ParentID = loom.KindSubagent, src.ID
	child.CreatedAt, child.UpdatedAt = created, created
	data := []*loom.SessionData{{Session: src, Messages: msgs}, {Session: child}}
	if err := st.Import(ctx(t), data); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session(ctx(t), src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "imported" || !got.CreatedAt.Equal(created) || !got.UpdatedAt.Equal(src.UpdatedAt) || got.MessageCount != 4 || got.TurnCount != 2 || got.Usage != src.Usage || got.LastPrompt != "imported text 3" {
		t.Fatalf("imported session = %+v", got)
	}
	stored := mustMessages(t, st, src.ID, loom.MessageQuery{})
	jsonEqual(t, "imported messages", stored, msgs)
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "imported text", UserID: "alice"}); len(hits) != 4 {
		t.Fatalf("imported messages searchable: %d hits", len(hits))
	}
	// Again: conflict, nothing written.
	wantCode(t, st.Import(ctx(t), data), loom.ECONFLICT)
	// One bad session in a batch: nothing of the batch is written.
	good := newSession("alice", "cli:good")
	good.CreatedAt, good.UpdatedAt = created, created
	bad := newSession("alice", "cli:bad")
	bad.CreatedAt, bad.UpdatedAt = created, created
	gap := text(loom.RoleUser, "gap")
	gap.ID, gap.Seq, gap.CreatedAt = loom.NewID(), 2, created
	err = st.Import(ctx(t), []*loom.SessionData{{Session: good}, {Session: bad, Messages: []*loom.Message{gap}}})
	wantCode(t, err, loom.EINVALID)
	if _, err := st.Session(ctx(t), good.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("failed import wrote a session")
	}
	// Appending to an imported session continues its seq.
	mustAppend(t, st, got, text(loom.RoleUser, "after import"))
	if got.MessageCount != 5 {
		t.Fatalf("append after import = %d messages", got.MessageCount)
	}
}

// An import of sessions longer than the rows an engine writes in one
// statement stores every message with its own body and search entry, and
// a failure after some of them were written leaves none of them.
func testImportLong(t *testing.T, open Opener) {
	st := open(t)
	created := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	long := func(key string, n int) *loom.SessionData {
		s := newSession("alice", key)
		s.CreatedAt, s.UpdatedAt = created, created
		var msgs []*loom.Message
		for i := 1; i <= n; i++ {
			role := loom.RoleUser
			if i%2 == 0 {
				role = loom.RoleAssistant
			}
			m := text(role, fmt.Sprintf("long import %s word%d", key[4:], i))
			m.ID, m.Seq, m.CreatedAt = loom.NewID(), int64(i), created.Add(time.Duration(i)*time.Second)
			m.Parts[0].ID = loom.NewID()
			msgs = append(msgs, m)
		}
		return &loom.SessionData{Session: s, Messages: msgs}
	}
	a, b := long("cli:aaa", 250), long("cli:bbb", 131)
	if err := st.Import(ctx(t), []*loom.SessionData{a, b}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*loom.SessionData{a, b} {
		jsonEqual(t, "imported messages", mustMessages(t, st, d.Session.ID, loom.MessageQuery{}), d.Messages)
	}
	for _, want := range []struct {
		q   string
		d   *loom.SessionData
		seq int64
	}{{"aaa word1", a, 1}, {"aaa word101", a, 101}, {"aaa word250", a, 250}, {"bbb word131", b, 131}} {
		hits, err := st.Search(ctx(t), loom.SearchQuery{Text: want.q, UserID: "alice", Exact: true})
		if err != nil || len(hits) != 1 || hits[0].SessionID != want.d.Session.ID || hits[0].Seq != want.seq {
			t.Fatalf("search %q = %+v, %v", want.q, hits, err)
		}
	}
	// The second session's key is taken: the first one's rows, written
	// before that was found, are gone with the rest.
	c, d := long("cli:ccc", 150), long("cli:bbb", 120)
	wantCode(t, st.Import(ctx(t), []*loom.SessionData{c, d}), loom.ECONFLICT)
	if _, err := st.Session(ctx(t), c.Session.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("failed import wrote a session")
	}
	if hits, err := st.Search(ctx(t), loom.SearchQuery{Text: "ccc", UserID: "alice"}); err != nil || len(hits) != 0 {
		t.Fatalf("failed import left search entries: %+v, %v", hits, err)
	}
	// Bodies imported afterwards are searched as themselves.
	e := long("cli:eee", 101)
	if err := st.Import(ctx(t), []*loom.SessionData{e}); err != nil {
		t.Fatal(err)
	}
	if hits, err := st.Search(ctx(t), loom.SearchQuery{Text: "eee word101", UserID: "alice", Exact: true}); err != nil || len(hits) != 1 || hits[0].Seq != 101 {
		t.Fatalf("search after a failed import = %+v, %v", hits, err)
	}
}
