package storetest

import (
	"context"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

// SlowTiers is a store whose search runs its first tier (every word)
// on the store below and whose later tiers never end before their time
// does, as on a busy machine: a test of what a search out of time
// answers.
type SlowTiers struct{ loom.Engine }

// Search implements loom.Store.
func (s SlowTiers) Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error) {
	first := true
	return sqlstore.RunSearch(ctx, q, func(ctx context.Context, tq loom.SearchQuery, _ []loom.Term) ([]loom.SearchHit, error) {
		if first && !tq.AnyWord && !tq.Titles {
			first = false
			tq.Exact = true
			return s.Engine.Search(ctx, tq)
		}
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}, nil)
}
