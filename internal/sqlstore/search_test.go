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

// A search that runs out of time never puts other messages in the place
// of hits: one that has ranked none is refused; one whose later tiers
// run out returns what the tiers before found, in their order, marked
// partial; one whose caller gives up ends with the caller's error; a
// deadline of the caller's ends the tiers as their own budget does.
func TestRunSearch(t *testing.T) {
	slow := func(ctx context.Context, _ loom.SearchQuery, _ []loom.Term) ([]loom.SearchHit, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("search: %w", ctx.Err())
	}
	// Ranking is slow (a busy machine, common words): refused, never
	// the newest matches instead.
	var asked []string
	slowRank := func(ctx context.Context, q loom.SearchQuery, _ []loom.Term) ([]loom.SearchHit, error) {
		asked = append(asked, fmt.Sprintf("any=%v newest=%v titles=%v", q.AnyWord, q.Newest, q.Titles))
		if q.Newest {
			return []loom.SearchHit{{MessageID: "newest"}}, nil
		}
		return slow(ctx, q, nil)
	}
	start := time.Now()
	hits, err := RunSearch(context.Background(), loom.SearchQuery{Text: "slow"}, slowRank, nil)
	if loom.ErrorCode(err) != loom.EINVALID || !errors.Is(err, loom.ErrSearchTime) || !strings.Contains(loom.ErrorMessage(err), "fewer or rarer words") || len(hits) != 0 {
		t.Fatalf("a search out of time = %+v, %v (asked %q), want an invalid-input error and no hit", hits, err, asked)
	}
	if d := time.Since(start); d < loom.MaxRankTime {
		t.Fatalf("search stopped after %v, before its budget ran out", d)
	}
	// No message holds every word and the tiers run out of time (a busy
	// machine): refused, never the newest messages with some words.
	asked = nil
	slowTiers := func(ctx context.Context, q loom.SearchQuery, _ []loom.Term) ([]loom.SearchHit, error) {
		asked = append(asked, fmt.Sprintf("any=%v newest=%v titles=%v", q.AnyWord, q.Newest, q.Titles))
		switch {
		case q.Newest:
			return []loom.SearchHit{{MessageID: "newest"}}, nil
		case !q.AnyWord && !q.Titles && len(asked) == 1:
			return nil, nil // no message holds every word
		}
		return slow(ctx, q, nil)
	}
	hits, err = RunSearch(context.Background(), loom.SearchQuery{Text: "why did the schema migration"}, slowTiers, nil)
	if !errors.Is(err, loom.ErrSearchTime) || len(hits) != 0 {
		t.Fatalf("a search whose tiers ran out of time before any hit = %+v, %v (asked %q), want refused", hits, err, asked)
	}
	// Every word in one message, then the tiers run out: that hit,
	// partial, and no other.
	asked = nil
	someTiers := func(ctx context.Context, q loom.SearchQuery, _ []loom.Term) ([]loom.SearchHit, error) {
		asked = append(asked, fmt.Sprintf("any=%v newest=%v titles=%v", q.AnyWord, q.Newest, q.Titles))
		switch {
		case q.Newest:
			return []loom.SearchHit{{MessageID: "newest"}}, nil
		case !q.AnyWord && !q.Titles && len(asked) == 1:
			return []loom.SearchHit{{MessageID: "every"}}, nil
		case len(asked) == 2:
			return []loom.SearchHit{{MessageID: "form", SessionID: "s2"}}, nil
		}
		return slow(ctx, q, nil)
	}
	hits, err = RunSearch(context.Background(), loom.SearchQuery{Text: "schema migration"}, someTiers, nil)
	if err != nil || len(hits) != 2 || hits[0].MessageID != "every" || hits[1].MessageID != "form" || hits[1].Tier != loom.TierWordForms || !hits[0].Partial || !hits[1].Partial {
		t.Fatalf("a search whose later tiers ran out of time = %+v, %v (asked %q), want the hits found before, partial", hits, err, asked)
	}
	// The caller's deadline ends the tiers as their budget does.
	asked = nil
	start = time.Now()
	hits, err = RunSearch(context.Background(), loom.SearchQuery{Text: "schema migration", Deadline: time.Now().Add(loom.MaxSearchTime / 8)}, someTiers, nil)
	if err != nil || len(hits) != 2 || !loom.Partial(hits) || time.Since(start) >= loom.MaxSearchTime {
		t.Fatalf("a search past its deadline = %+v, %v after %v, want the hits found before it, partial", hits, err, time.Since(start))
	}
	if hits, err := RunSearch(context.Background(), loom.SearchQuery{Text: "fast"}, func(context.Context, loom.SearchQuery, []loom.Term) ([]loom.SearchHit, error) {
		return []loom.SearchHit{{MessageID: "a"}}, nil
	}, nil); err != nil || loom.Partial(hits) {
		t.Fatalf("a search in time = %+v, %v, want its hits, not partial", hits, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := RunSearch(ctx, loom.SearchQuery{Text: "slow"}, slow, nil); !errors.Is(err, context.Canceled) || loom.ErrorCode(err) != loom.EINTERNAL {
		t.Fatalf("a cancelled search = %v, want the context's error", err)
	}

	// A query over the limits never reaches the engine.
	_, err = RunSearch(context.Background(), loom.SearchQuery{Text: strings.Repeat("x ", loom.MaxQueryBytes), Exact: true}, func(context.Context, loom.SearchQuery, []loom.Term) ([]loom.SearchHit, error) {
		t.Fatal("search ran a refused query")
		return nil, nil
	}, nil)
	if loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("a query over the limits = %v", err)
	}
	var got []loom.Term
	RunSearch(context.Background(), loom.SearchQuery{Text: "pool pool size"}, func(_ context.Context, _ loom.SearchQuery, terms []loom.Term) ([]loom.SearchHit, error) {
		got = terms
		return nil, nil
	}, nil)
	if len(got) != 2 {
		t.Fatalf("search was given terms %v", got)
	}
}
