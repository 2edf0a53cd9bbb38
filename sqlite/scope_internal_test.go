package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// A search inside a small scope of a large store (a project, a role, a
// time span whose messages are few of the query's matches) walks the
// match's rowids against the scope's messages (scopeNewest), at once
// when the scope holds fewer messages than it ranks whole (smallScope),
// else after the newest ScanDepth matches held too few of them, and
// ranks only those. It answers exactly what the join from each of the scope's
// messages answered: the same hits, in the same order, with the same
// scores and partial marks, for random scopes and queries over a
// generated store where the common words match more messages than
// ScanDepth. LOOM_TEST_SEED replays a run.
func TestScopedSearchSameAnswer(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LOOM_TEST_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("LOOM_TEST_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("seed %d (LOOM_TEST_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ctx := context.Background()
	st := openTemp(t)
	// common words are in most messages (more than ScanDepth of them),
	// rare ones in few.
	common := []string{"alpha", "bravo", "charlie", "delta"}
	rare := []string{"quartz", "zephyr", "violet", "mango", "nickel", "saffron", "tundra", "walrus"}
	const projects, messages = 200, ScanDepth + 6000
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var batch []*loom.SessionData
	// The projects that hold messages: a scope is drawn from them, since
	// an empty project's answer is rightly empty and would test nothing.
	var used []string
	seen := map[string]bool{}
	for n, i := 0, 0; n < messages; i++ {
		id := loom.NewID()
		p := loom.Project{ID: fmt.Sprintf("p%015d", r.IntN(projects)), Name: "p", Root: "/p"}
		if r.IntN(100) < 8 {
			// A project of more messages than a search ranks whole, but
			// few of the newest ScanDepth matches.
			p.ID = "pbig"
		}
		if !seen[p.ID] && p.ID != "pbig" {
			seen[p.ID] = true
			used = append(used, p.ID)
		}
		s := &loom.Session{ID: id, UserID: "alice", Key: fmt.Sprintf("cli:s%d", i), Surface: "cli", Kind: loom.KindMain,
			Project: p, CreatedAt: now, Title: "t"}
		var msgs []*loom.Message
		for j := 1; j <= 20+r.IntN(40); j++ {
			now = now.Add(time.Second)
			var words []string
			for _, w := range common {
				if r.IntN(10) < 9 {
					words = append(words, w)
				}
			}
			for range 1 + r.IntN(3) {
				words = append(words, rare[r.IntN(len(rare))])
			}
			role := loom.RoleUser
			if j%2 == 0 {
				role = loom.RoleAssistant
			}
			msgs = append(msgs, &loom.Message{ID: loom.NewID(), SessionID: id, Seq: int64(j), Role: role, Turn: (j + 1) / 2, CreatedAt: now,
				Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: strings.Join(words, " ")}}})
		}
		s.MessageCount, s.TurnCount, s.UpdatedAt = len(msgs), (len(msgs)+1)/2, now
		n += len(msgs)
		batch = append(batch, &loom.SessionData{Session: s, Messages: msgs})
		if len(batch) == 100 {
			if err := st.Import(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	if err := st.Import(ctx, batch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scopeByJoin = false })
	pick := func(words []string) string { return words[r.IntN(len(words))] }
	for i := range 15 {
		q := loom.SearchQuery{UserID: "alice", ProjectID: used[r.IntN(len(used))], Limit: 5 + r.IntN(40)}
		if r.IntN(5) == 0 {
			q.ProjectID = "pbig"
		}
		switch r.IntN(3) {
		case 0:
			q.Text = pick(common) + " " + pick(common)
		case 1:
			q.Text, q.AnyWord = pick(common)+" "+pick(rare)+" "+pick(common), true
		default:
			q.Text, q.AnyWord = pick(common)+" "+pick(common), true
		}
		if r.IntN(4) == 0 {
			q.Role = loom.RoleUser
		}
		// The engine's search itself: RunSearch's tiers after it share a
		// time budget, which the slower join ran out of.
		terms, err := q.Terms()
		if err != nil {
			t.Fatal(err)
		}
		scopeByJoin = false
		got, err := st.search(ctx, q, terms)
		if err != nil {
			t.Fatalf("query %d %+v: %v (seed %d)", i, q, err, seed)
		}
		scopeByJoin = true
		want, err := st.search(ctx, q, terms)
		if err != nil {
			t.Fatalf("query %d %+v by join: %v (seed %d)", i, q, err, seed)
		}
		if len(got) == 0 {
			t.Fatalf("query %d %q in %s: no hits (seed %d)", i, q.Text, q.ProjectID, seed)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d %q in %s (any word %v, role %q): %d hits, by join %d; first %+v, by join %+v (seed %d)",
				i, q.Text, q.ProjectID, q.AnyWord, q.Role, len(got), len(want), got[0], want[0], seed)
		}
	}
}
