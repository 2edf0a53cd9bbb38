package searcheval

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// scopeStoreEnv names a SQLite file holding the planted sessions and
// 100,000 filler messages over 1,000 projects (seed 7), made by the
// first run that names it and reused by later ones: making it takes
// minutes on a busy machine. scopePostgresEnv set to 1 makes the same
// store on PostgreSQL (in a schema of its own, dropped after) and asks
// it too.
const (
	scopeStoreEnv    = "LOOM_TEST_SCOPE_STORE"
	scopePostgresEnv = "LOOM_TEST_SCOPE_POSTGRES"
)

// TestScopedSearchCost times the questions' searches asked inside their
// project of 1,000 and across every project of a store of 100,000
// filler messages: a search in a small project of a large store should
// cost no more than one of every project (docs/search.md).
func TestScopedSearchCost(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		path := os.Getenv(scopeStoreEnv)
		if path == "" {
			t.Skipf("%s names the store file to make or reuse", scopeStoreEnv)
		}
		_, statErr := os.Stat(path)
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		scopedSearchCost(t, st, statErr != nil)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		if os.Getenv(scopePostgresEnv) != "1" {
			t.Skipf("%s=1 asks PostgreSQL", scopePostgresEnv)
		}
		scopedSearchCost(t, postgresStore(t), true)
	})
}

// scopedSearchCost plants the sessions in st, over 1,000 projects, adds
// the filler when fill says so, and times each question's search in its
// project and in every project.
func scopedSearchCost(t *testing.T, st loom.Engine, fill bool) {
	ctx := context.Background()
	l, texts := plant(t, st, 1000, 7)
	qs := append(append(append([]paraphrase{}, paraphrases...), heldOut...), heldOutScale...)
	if fill {
		vocab, weights := fillerWords(texts, qs)
		l.gen.vocab, l.gen.cum = vocab, weights
		start := time.Now()
		if err := l.gen.fill(ctx, st, 100_000); err != nil {
			t.Fatal(err)
		}
		t.Logf("100,000 filler messages added in %v", time.Since(start).Round(time.Millisecond))
	}
	var inside, across time.Duration
	for _, p := range qs {
		for _, pid := range []string{l.project[p.targets[0]], ""} {
			q := loom.SearchQuery{Text: p.prompt, UserID: "alice", ProjectID: pid, Limit: 20}
			start := time.Now()
			_, err := st.Search(ctx, q)
			d := time.Since(start)
			if pid == "" {
				across += d
			} else {
				inside += d
			}
			t.Logf("%-8v project=%q %q err=%v", d.Round(time.Millisecond), pid, p.prompt, err)
		}
	}
	t.Logf("the questions' searches: inside their project %v, across every project %v", inside.Round(time.Millisecond), across.Round(time.Millisecond))
}
