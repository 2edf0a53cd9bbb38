package search_test

import (
	"context"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/clitest"
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
	fx := clitest.NewFixture(t)
	slow := clitest.RunOpts{Before: func(f *cli.Factory) {
		open := f.OpenStore
		f.OpenStore = func(ctx context.Context, url string, access cli.Access) (loom.Store, error) {
			st, err := open(ctx, url, access)
			if err != nil {
				return nil, err
			}
			return slowRanking{st}, nil
		}
	}}
	r := fx.RunWith(t, slow, "search", "TestRetry", "--json")
	if r.Code != 0 || strings.Contains(r.Stderr, "too many") {
		t.Fatalf("search --json out of time: exit %d\n%s", r.Code, r.Stderr)
	}
	hits := clitest.DecodeJSON[[]map[string]any](t, r.Stdout)
	if len(hits) == 0 {
		t.Fatalf("search --json out of time found nothing:\n%s", r.Stdout)
	}
	for _, h := range hits {
		if h["partial"] != true {
			t.Fatalf("a hit of a search out of time is not marked partial:\n%s", r.Stdout)
		}
	}
	if strings.Count(r.Stdout, `"partial": true`) != len(hits) {
		t.Fatalf(`want "partial": true once per hit:\n%s`, r.Stdout)
	}

	r = fx.RunWith(t, slow, "search", "TestRetry")
	if r.Code != 0 || !strings.Contains(r.Stdout, "TestRetry") {
		t.Fatalf("search out of time: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	if got := clitest.Lines(r.Stderr); len(got) != 1 || !strings.HasPrefix(got[0], "Search ran out of time ranking its matches") {
		t.Fatalf("search out of time: want one line on stderr saying the hits are partial, got:\n%s", r.Stderr)
	}
	if strings.Contains(r.Stdout, "partial") {
		t.Fatalf("the partial note is in the hits:\n%s", r.Stdout)
	}

	// The same search in time is not marked.
	r = fx.Run(t, "search", "TestRetry", "--json")
	if r.Code != 0 || strings.Contains(r.Stdout, "partial") || r.Stderr != "" {
		t.Fatalf("search in time: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
}
