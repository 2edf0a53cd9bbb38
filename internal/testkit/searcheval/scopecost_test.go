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
// minutes.
const scopeStoreEnv = "LOOM_TEST_SCOPE_STORE"

// TestScopedSearchCost times each question asked inside its project of
// 1,000 and across every project of a store of 100,000 filler messages.
func TestScopedSearchCost(t *testing.T) {
	path := os.Getenv(scopeStoreEnv)
	if path == "" {
		t.Skipf("%s names the store file to make or reuse", scopeStoreEnv)
	}
	ctx := context.Background()
	_, statErr := os.Stat(path)
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, texts := plant(t, st, 1000, 7)
	qs := append(append(append([]paraphrase{}, paraphrases...), heldOut...), heldOutScale...)
	if statErr != nil {
		vocab, weights := fillerWords(texts, qs)
		l.gen.vocab, l.gen.cum = vocab, weights
		if err := l.gen.fill(ctx, st, 100_000); err != nil {
			t.Fatal(err)
		}
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
	t.Logf("inside %v, across %v", inside.Round(time.Millisecond), across.Round(time.Millisecond))
}
