package sqlite_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// TestPackedReads checks that a listing and newest-N, which read their
// rows packed into JSON arrays, read back values that JSON escapes or
// rounds as they were stored: a listed session as Session reads it
// column by column, and messages as they were imported.
func TestPackedReads(t *testing.T) {
	ctx := context.Background()
	st := tempStore(t)
	at := time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC)
	odd := "quote \" backslash \\ newline \n tab \t nul-ish \x01 emoji 😀 é </script>"
	s := &loom.Session{ID: loom.NewID(), UserID: "u", Key: "cli:x", Kind: loom.KindMain, Title: odd,
		Description: odd, Cwd: "/tmp/x", Model: "m", CreatedAt: at, UpdatedAt: at,
		Usage:  loom.Usage{InputTokens: 1 << 40, CostUSD: 0.1 + 0.2, APICalls: 3},
		Source: &loom.Source{Tool: "codex", Version: "1.2", Path: "/p/" + odd}}
	msgs := []*loom.Message{
		{ID: loom.NewID(), Seq: 1, Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: odd}}},
		{ID: loom.NewID(), Seq: 2, Role: loom.RoleAssistant, CreatedAt: at, Model: odd,
			Usage: loom.Usage{OutputTokens: 300, CostUSD: 1e-17 + 0.7}, Error: &loom.MessageError{Message: odd},
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "a"}, {ID: loom.NewID(), Type: loom.PartText, Text: "b"}}},
	}
	if err := st.Import(ctx, []*loom.SessionData{{Session: s, Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	list, err := st.Sessions(ctx, loom.SessionFilter{UserID: "u"})
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %v, %v", list, err)
	}
	one, err := st.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(list[0], one) {
		t.Errorf("listed:\n%+v\nread:\n%+v", list[0], one)
	}
	if list[0].Title != odd || list[0].Usage.CostUSD != 0.1+0.2 || list[0].Source.Path != "/p/"+odd {
		t.Errorf("listed %q, cost %v, source %+v", list[0].Title, list[0].Usage.CostUSD, list[0].Source)
	}
	newest, err := st.Messages(ctx, s.ID, loom.MessageQuery{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	all, err := st.Context(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(newest, all) {
		t.Errorf("newest:\n%+v\nall:\n%+v", newest, all)
	}
	// Both read packed: each message must also be the one imported.
	for i, m := range all {
		want := *msgs[i]
		want.SessionID = s.ID
		if !reflect.DeepEqual(*m, want) {
			t.Errorf("message %d read back:\n%+v\nimported:\n%+v", i+1, *m, want)
		}
	}
	if len(newest) != 2 || newest[0].Parts[0].Text != odd || newest[1].Model != odd || newest[1].Error.Message != odd ||
		newest[1].Usage.CostUSD != 1e-17+0.7 || len(newest[1].Parts) != 2 || newest[0].SessionID != s.ID {
		t.Errorf("newest = %+v, %+v", newest[0], newest[1])
	}
}
