package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// A search that runs out of time ranking returns its newest matches,
// marked partial; one that runs out of time for those too is refused;
// one whose caller gives up ends with the caller's error.
func TestRunSearch(t *testing.T) {
	slow := func(ctx context.Context, _ loom.SearchQuery, _ []loom.Term) ([]loom.SearchHit, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("search: %w", ctx.Err())
	}
	defer func(d time.Duration) { newestTime = d }(newestTime)
	newestTime = 2 * loom.MaxSearchTime
	start := time.Now()
	_, err := RunSearch(context.Background(), loom.SearchQuery{Text: "slow"}, slow)
	if loom.ErrorCode(err) != loom.EINVALID || !errors.Is(err, loom.ErrSearchTime) || !strings.Contains(loom.ErrorMessage(err), "fewer or rarer words") {
		t.Fatalf("a search out of time = %v, want an invalid-input error", err)
	}
	if d := time.Since(start); d < loom.MaxSearchTime+newestTime {
		t.Fatalf("search stopped after %v, before its two budgets ran out", d)
	}

	// Ranking is slow (a busy machine, common words): the newest matches.
	var asked []bool
	slowRank := func(ctx context.Context, q loom.SearchQuery, _ []loom.Term) ([]loom.SearchHit, error) {
		asked = append(asked, q.Newest)
		if !q.Newest {
			return slow(ctx, q, nil)
		}
		return []loom.SearchHit{{MessageID: "a"}, {MessageID: "b"}}, nil
	}
	hits, err := RunSearch(context.Background(), loom.SearchQuery{Text: "common"}, slowRank)
	if err != nil || len(hits) != 2 || !loom.Partial(hits) || !hits[1].Partial || len(asked) != 2 || asked[0] || !asked[1] {
		t.Fatalf("a search whose ranking ran out of time = %+v, %v (asked newest: %v), want its newest hits, partial", hits, err, asked)
	}
	// Every word is found nowhere together and the tiers run out of
	// time (a busy machine): the newest messages with some of the words,
	// partial, never an empty page.
	var tiersAsked []string
	slowTiers := func(ctx context.Context, q loom.SearchQuery, _ []loom.Term) ([]loom.SearchHit, error) {
		tiersAsked = append(tiersAsked, fmt.Sprintf("any=%v newest=%v titles=%v", q.AnyWord, q.Newest, q.Titles))
		switch {
		case !q.AnyWord && !q.Titles && !q.Newest && len(tiersAsked) == 1:
			return nil, nil // no message holds every word
		case q.AnyWord && q.Newest:
			return []loom.SearchHit{{MessageID: "c"}}, nil
		}
		return slow(ctx, q, nil)
	}
	hits, err = RunSearch(context.Background(), loom.SearchQuery{Text: "why did the schema migration"}, slowTiers)
	if err != nil || len(hits) != 1 || hits[0].Tier != loom.TierAnyWord || !hits[0].Partial {
		t.Fatalf("a search whose tiers ran out of time = %+v, %v (asked %q), want the newest some-words hit, partial", hits, err, tiersAsked)
	}
	if hits, err := RunSearch(context.Background(), loom.SearchQuery{Text: "fast"}, func(context.Context, loom.SearchQuery, []loom.Term) ([]loom.SearchHit, error) {
		return []loom.SearchHit{{MessageID: "a"}}, nil
	}); err != nil || loom.Partial(hits) {
		t.Fatalf("a search in time = %+v, %v, want its hits, not partial", hits, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := RunSearch(ctx, loom.SearchQuery{Text: "slow"}, slow); !errors.Is(err, context.Canceled) || loom.ErrorCode(err) != loom.EINTERNAL {
		t.Fatalf("a cancelled search = %v, want the context's error", err)
	}

	// A query over the limits never reaches the engine.
	_, err = RunSearch(context.Background(), loom.SearchQuery{Text: strings.Repeat("x ", loom.MaxQueryBytes), Exact: true}, func(context.Context, loom.SearchQuery, []loom.Term) ([]loom.SearchHit, error) {
		t.Fatal("search ran a refused query")
		return nil, nil
	})
	if loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("a query over the limits = %v", err)
	}
	var got []loom.Term
	RunSearch(context.Background(), loom.SearchQuery{Text: "pool pool size"}, func(_ context.Context, _ loom.SearchQuery, terms []loom.Term) ([]loom.SearchHit, error) {
		got = terms
		return nil, nil
	})
	if len(got) != 2 {
		t.Fatalf("search was given terms %v", got)
	}
}
