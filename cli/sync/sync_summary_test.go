package sync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// A summary crosses sync as the description it is: written on one
// machine, it reaches the other, which shows it and finds the session by
// a word of it alone. A description the user writes on the other
// machine, over the summary or where there was none, reaches the first
// too, and no later summary pass on either machine writes over it.
func TestSyncCarriesSummaries(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	clitest.OnBothHubs(t, func(t *testing.T, hubDB func(*testing.T) string) { testSyncCarriesSummaries(t, hubDB(t)) })
}

func testSyncCarriesSummaries(t *testing.T, hubDB string) {
	a, b, _, hubHome := clitest.SyncPair(t, hubDB)
	ctx := context.Background()
	// Two sessions on the first machine, imported, quiet long enough to
	// be summarised.
	hunt, notes := loom.NewID(), loom.NewID()
	var lines []string
	for _, s := range []struct{ id, title, prompt string }{
		{hunt, "retry hunt", "Why does TestRetry flake?"},
		{notes, "release notes", "Draft the release notes."},
	} {
		lines = append(lines, fmt.Sprintf(`{"type":"session","session":{"id":%q,"user_id":"local","kind":"main","title":%q,"created_at":"2025-05-01T10:00:00.000Z","updated_at":"2025-05-01T10:00:00.000Z"}}`, s.id, s.title),
			fmt.Sprintf(`{"type":"message","message":{"id":%q,"seq":1,"role":"user","created_at":"2025-05-01T10:00:00.000Z","parts":[{"id":"p1","type":"text","text":%q}]}}`, loom.NewID(), s.prompt))
	}
	file := filepath.Join(a.Home, "in.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.MustExec(t, "session", "import", file)
	syncBoth := func() {
		t.Helper()
		for _, fx := range []*clitest.Fixture{a, b, a} {
			fx.MustExec(t, "sync")
		}
	}
	syncBoth()

	srv, env := clitest.SummaryModel(t)
	summary := "Traced the flake to the axolotl timer.\nSwitched the test to a fake clock."
	srv.Enqueue(openaitest.Reply{Text: summary})
	if got := a.Summarize(t, env, hunt); len(got) != 1 || got[0].Summary != summary {
		t.Fatalf("summarise on the first machine: %+v", got)
	}
	syncBoth()
	wantDescriptions(t, b, "the second machine, after the summary", map[string]string{hunt: summary, notes: ""})
	if hits := hitSessions(t, b, "axolotl"); !slices.Equal(hits, []string{hunt}) {
		t.Fatalf("search axolotl on the second machine finds sessions %q, want %s", hits, hunt)
	}

	// The user writes descriptions on the second machine: over the
	// summary, and where there was none.
	mine := map[string]string{hunt: "My notes on the retry hunt.", notes: "The 2.0 release, my checklist."}
	st, err := clitest.OpenEngine(ctx, b.DB)
	if err != nil {
		t.Fatal(err)
	}
	for id, desc := range mine {
		if _, err := st.UpdateSession(ctx, id, loom.SessionUpdate{Description: &desc}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	syncBoth()
	wantDescriptions(t, a, "the first machine, after the user's", mine)
	if hits := hitSessions(t, a, "checklist"); !slices.Equal(hits, []string{notes}) {
		t.Fatalf("search checklist on the first machine finds sessions %q, want %s", hits, notes)
	}

	// Later summary passes, on either machine, leave the user's words.
	for _, fx := range []*clitest.Fixture{a, b} {
		if got := fx.Summarize(t, env, "--all"); len(got) != 0 {
			t.Errorf("a pass over every session took %+v", got)
		}
		for _, r := range fx.Summarize(t, env, hunt, notes) {
			if r.Skipped != "has a description" {
				t.Errorf("summarise %s again: %+v", r.SessionID, r)
			}
		}
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
	syncBoth()
	for _, fx := range []*clitest.Fixture{a, b} {
		wantDescriptions(t, fx, "after the later passes", mine)
	}
	clitest.HubHoldsNo(t, hubHome, hubDB, "axolotl", "checklist")
}

// wantDescriptions fails unless fx's sessions hold the descriptions want
// gives by session id.
func wantDescriptions(t *testing.T, fx *clitest.Fixture, when string, want map[string]string) {
	t.Helper()
	for id, desc := range want {
		var show struct {
			Session loom.Session `json:"session"`
		}
		if err := json.Unmarshal([]byte(fx.MustExec(t, "session", "show", id, "--json")), &show); err != nil {
			t.Fatal(err)
		}
		if show.Session.Description != desc {
			t.Errorf("%s: session %s has description %q, want %q", when, id, show.Session.Description, desc)
		}
	}
}

// hitSessions returns the sessions loom search finds word in on fx, in
// every project, each once, sorted.
func hitSessions(t *testing.T, fx *clitest.Fixture, word string) []string {
	t.Helper()
	var ids []string
	for _, h := range searchHits(t, fx, word) {
		if id := strings.Fields(h)[2]; !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
