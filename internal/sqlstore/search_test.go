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

// A search that runs out of time is refused; one whose caller gives up
// ends with the caller's error.
func TestRunSearch(t *testing.T) {
	slow := func(ctx context.Context, _ []loom.Term) ([]loom.SearchHit, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("search: %w", ctx.Err())
	}
	start := time.Now()
	_, err := RunSearch(context.Background(), loom.SearchQuery{Text: "slow"}, slow)
	if loom.ErrorCode(err) != loom.EINVALID || !errors.Is(err, loom.ErrSearchTime) || !strings.Contains(loom.ErrorMessage(err), "fewer or rarer words") {
		t.Fatalf("a search out of time = %v, want an invalid-input error", err)
	}
	if d := time.Since(start); d < loom.MaxSearchTime {
		t.Fatalf("search stopped after %v, before its time ran out", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := RunSearch(ctx, loom.SearchQuery{Text: "slow"}, slow); !errors.Is(err, context.Canceled) || loom.ErrorCode(err) != loom.EINTERNAL {
		t.Fatalf("a cancelled search = %v, want the context's error", err)
	}

	// A query over the limits never reaches the engine.
	_, err = RunSearch(context.Background(), loom.SearchQuery{Text: strings.Repeat("x ", loom.MaxQueryBytes)}, func(context.Context, []loom.Term) ([]loom.SearchHit, error) {
		t.Fatal("search ran a refused query")
		return nil, nil
	})
	if loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("a query over the limits = %v", err)
	}
	var got []loom.Term
	RunSearch(context.Background(), loom.SearchQuery{Text: "pool pool size"}, func(_ context.Context, terms []loom.Term) ([]loom.SearchHit, error) {
		got = terms
		return nil, nil
	})
	if len(got) != 2 {
		t.Fatalf("search was given terms %v", got)
	}
}
