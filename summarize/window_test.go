package summarize_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/summarize"
)

// userWritesAfterCheck is a SQLite store on which the user writes a
// description of a session just after the summarizer, its model having
// answered, read the session again to check that it still has none: the
// write falls between that check and the summary's own write.
type userWritesAfterCheck struct {
	*sqlite.Store
	srv     *openaitest.Server
	desc    string
	written bool
}

func (s *userWritesAfterCheck) Session(ctx context.Context, id string) (*loom.Session, error) {
	x, err := s.Store.Session(ctx, id)
	if err == nil && !s.written && len(s.srv.Requests()) > 0 {
		s.written = true
		_, err = s.Store.UpdateSession(ctx, id, loom.SessionUpdate{Description: &s.desc})
	}
	return x, err
}

// A description the user writes while a summary is on its way stays,
// even written after the summarizer's last check: the store writes the
// summary only where the description is still empty, in the same
// transaction, and the session is said to have a description.
func TestSummaryKeepsADescriptionWrittenAfterTheCheck(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	srv.Enqueue(openaitest.Reply{Text: "Found why the test flakes."})
	store := &userWritesAfterCheck{Store: st, srv: srv, desc: "My own words."}

	s := &loom.Session{UserID: "u", Key: "cli:api", Title: "flaky test"}
	if err := st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "Why does TestRetry flake?"}}}); err != nil {
		t.Fatal(err)
	}
	z := &summarize.Summarizer{Store: store, UserID: "u", Quiet: time.Minute, Model: "gpt-4o-mini",
		Provider: openai.New(openai.Config{BaseURL: srv.BaseURL(), MaxRetries: -1}),
		Now:      func() time.Time { return time.Now().Add(time.Hour) }}
	res, err := z.Summarise(ctx, s, false)
	if err != nil {
		t.Fatal(err)
	}
	if !store.written || res.Skipped != summarize.SkipDescribed || res.Summary != "" {
		t.Fatalf("result %+v (the user wrote: %v), want skipped %q", res, store.written, summarize.SkipDescribed)
	}
	if got, err := st.Session(ctx, s.ID); err != nil || got.Description != "My own words." {
		t.Fatalf("stored description: %+v, %v", got, err)
	}
}
