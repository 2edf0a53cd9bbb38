package postgres_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
)

// Text PostgreSQL cannot hold (NUL bytes, invalid UTF-8) still round-trips
// in parts, which are JSON; only the derived search text is cleaned.
func TestAwkwardText(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	s := &loom.Session{UserID: "alice", Key: "cli:x"}
	text := "nul\x00byte and \xff invalid"
	if err := st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}); err != nil {
		t.Fatal(err)
	}
	msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("messages = %v, %v", msgs, err)
	}
	if got := msgs[0].Text(); got != "nul\x00byte and \uFFFD invalid" {
		t.Fatalf("text = %q", got)
	}
	if hits := search(t, st, loom.SearchQuery{Text: "invalid"}); len(hits) != 1 {
		t.Fatalf("search = %+v", hits)
	}
}

// Deleting rows by hand, messages first and then the session, leaves no
// orphaned bodies; a fork's shared bodies stay while it uses them.
func TestHandDeletion(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	s := &loom.Session{UserID: "alice", Key: "cli:x"}
	for i := range 3 {
		m := []*loom.Message{
			{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "question " + string(rune('a'+i))}}},
			{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "answer"}}},
		}
		if err := st.Append(ctx, s, m...); err != nil {
			t.Fatal(err)
		}
	}
	f, err := st.Fork(ctx, s.ID, loom.ForkOptions{Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM bodies`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 6 {
		t.Fatalf("bodies after fork = %d, want 6 (shared)", n)
	}
	if _, err := st.Pool().Exec(ctx, `DELETE FROM messages WHERE session_id = $1`, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `DELETE FROM sessions WHERE id = $1`, s.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 4 {
		t.Fatalf("bodies after hand deletion = %d, want the fork's 4", n)
	}
	if _, err := st.Pool().Exec(ctx, `DELETE FROM sessions WHERE id = $1`, f.ID); err != nil {
		t.Fatal(err)
	}
	var msgs int
	st.Pool().QueryRow(ctx, `SELECT count(*) FROM messages`).Scan(&msgs)
	if n := count(); n != 0 || msgs != 0 {
		t.Fatalf("after deleting the fork's session row: %d bodies, %d messages", n, msgs)
	}
}

// Import stores every field as given, through COPY: errors, completion
// times, tool parts with raw JSON, summaries, a trashed session.
func TestImportRoundTrip(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	at := time.Date(2025, 3, 4, 5, 6, 7, 890e6, time.UTC)
	done := at.Add(1500 * time.Millisecond)
	deleted := at.Add(time.Hour)
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "telegram:9", Title: "t", Description: "d", Model: "m", Provider: "p",
		Profile: "coder", Cwd: "/x", CreatedAt: at, UpdatedAt: done, DeletedAt: &deleted, Usage: loom.Usage{OutputTokens: 3, CostUSD: 0.125}}
	msgs := []*loom.Message{
		{ID: loom.NewID(), Seq: 1, Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "run it"}}},
		{ID: loom.NewID(), Seq: 2, Role: loom.RoleAssistant, Model: "m", Provider: "p", CreatedAt: at, CompletedAt: &done,
			Usage: loom.Usage{InputTokens: 1, OutputTokens: 3, CostUSD: 0.125, APICalls: 1},
			Error: &loom.MessageError{Message: "rate limited", Type: "api"},
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartTool, CallID: "c1", Name: "read_file", Status: loom.ToolError,
				Input: json.RawMessage(`{"z":1,"a":[true,null]}`), Error: "boom", StartedAt: &at, EndedAt: &done, Metadata: json.RawMessage(`{"k":"v"}`)}}},
		{ID: loom.NewID(), Seq: 3, Role: loom.RoleSummary, CreatedAt: done, Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "summary"}}},
	}
	if err := st.Import(ctx, []*loom.SessionData{{Session: s, Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		m.SessionID = s.ID
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(msgs)
	if string(g) != string(w) {
		t.Fatalf("imported messages:\n got %s\nwant %s", g, w)
	}
	x, err := st.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if x.DeletedAt == nil || !x.DeletedAt.Equal(deleted) || x.SummarySeq != 3 || x.TurnCount != 1 || x.LastPrompt != "run it" ||
		x.Usage != s.Usage || x.Surface != "telegram" || x.Profile != "coder" || !x.UpdatedAt.Equal(done) {
		t.Fatalf("imported session = %+v", x)
	}
	if err := st.Restore(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, st, loom.SearchQuery{Text: "boom read_file"}); len(hits) != 1 || hits[0].Seq != 2 {
		t.Fatalf("search in imported tool part = %+v", hits)
	}
}

// Deleting a session's messages and then its row by hand, on a family
// whose history lies in several sessions' rows (forks read their
// parents' rows, a rewound session its old ones), leaves every other
// session whole, and deleting them all leaves nothing behind.
func TestHandDeletionKeepsLineage(t *testing.T) {
	t.Parallel()
	for _, order := range [][]string{{"root", "fork", "grand", "rewound"}, {"rewound", "grand", "fork", "root"}, {"fork", "root", "rewound", "grand"}} {
		st := open(t, freshSchema(t))
		ctx := context.Background()
		ids, holds := storetest.Lineage(t, st)
		for _, name := range order {
			id := ids[name]
			for _, q := range []string{`DELETE FROM messages WHERE session_id = $1`, `DELETE FROM sessions WHERE id = $1`} {
				if _, err := st.Pool().Exec(ctx, q, id); err != nil {
					t.Fatal(err)
				}
			}
			delete(holds, id)
			storetest.CheckHolds(t, st, holds)
		}
		for _, table := range []string{"messages", "bodies", "spans"} {
			var n int
			if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%v: %d rows left in %s", order, n, table)
			}
		}
	}
}
