package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

// slowRanking is a store whose ranked search never finishes within
// loom.MaxSearchTime, as on a slow machine or for common words, while
// its newest-first search is the real engine's.
type slowRanking struct{ loom.Store }

func (s slowRanking) Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error) {
	return sqlstore.RunSearch(ctx, q, func(ctx context.Context, q loom.SearchQuery, _ []loom.Term) ([]loom.SearchHit, error) {
		if !q.Newest {
			<-ctx.Done()
			return nil, context.Cause(ctx)
		}
		return s.Store.Search(ctx, q)
	})
}

// A search whose ranking runs out of time shows its newest matches,
// marked partial: "partial": true on each hit with --json, one line on
// stderr saying so as text, and never the refusal that its words are in
// too many messages.
func TestSearchOutOfTimeIsPartial(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	slow := runOpts{before: func(f *Factory) {
		open := f.OpenStore
		f.OpenStore = func(ctx context.Context, url string, access Access) (loom.Store, error) {
			st, err := open(ctx, url, access)
			if err != nil {
				return nil, err
			}
			return slowRanking{st}, nil
		}
	}}
	r := fx.runWith(t, slow, "search", "TestRetry", "--json")
	if r.code != 0 || strings.Contains(r.stderr, "too many") {
		t.Fatalf("search --json out of time: exit %d\n%s", r.code, r.stderr)
	}
	hits := decodeJSON[[]map[string]any](t, r.stdout)
	if len(hits) == 0 {
		t.Fatalf("search --json out of time found nothing:\n%s", r.stdout)
	}
	for _, h := range hits {
		if h["partial"] != true {
			t.Fatalf("a hit of a search out of time is not marked partial:\n%s", r.stdout)
		}
	}
	if strings.Count(r.stdout, `"partial": true`) != len(hits) {
		t.Fatalf(`want "partial": true once per hit:\n%s`, r.stdout)
	}

	r = fx.runWith(t, slow, "search", "TestRetry")
	if r.code != 0 || !strings.Contains(r.stdout, "TestRetry") {
		t.Fatalf("search out of time: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if got := lines(r.stderr); len(got) != 1 || !strings.HasPrefix(got[0], "Search ran out of time ranking its matches") {
		t.Fatalf("search out of time: want one line on stderr saying the hits are partial, got:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, "partial") {
		t.Fatalf("the partial note is in the hits:\n%s", r.stdout)
	}

	// The same search in time is not marked.
	r = fx.run(t, "search", "TestRetry", "--json")
	if r.code != 0 || strings.Contains(r.stdout, "partial") || r.stderr != "" {
		t.Fatalf("search in time: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
