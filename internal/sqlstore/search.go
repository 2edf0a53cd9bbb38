package sqlstore

import (
	"context"
	"errors"

	"github.com/loomhq/loom"
)

// searchTimeError is the refusal of a search that ran out of time.
type searchTimeError struct{ refusal *loom.Error }

func (e searchTimeError) Error() string { return e.refusal.Error() }

func (e searchTimeError) Unwrap() []error { return []error{e.refusal, loom.ErrSearchTime} }

// RunSearch is how every engine runs a search: it checks q against the
// limits on a query, runs search with q's terms (see Terms) and a context
// that ends once it has run MaxSearchTime, and then refuses the query
// with an EINVALID error that wraps ErrSearchTime. When ctx ends, search must stop and return an
// error that wraps ctx's.
func RunSearch(ctx context.Context, q loom.SearchQuery, search func(ctx context.Context, terms []loom.Term) ([]loom.SearchHit, error)) ([]loom.SearchHit, error) {
	terms, err := q.Terms()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeoutCause(ctx, loom.MaxSearchTime, loom.ErrSearchTime)
	defer cancel()
	hits, err := search(sctx, terms)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(sctx), loom.ErrSearchTime) {
		return nil, searchTimeError{loom.Errorf(loom.EINVALID, "search stopped after %v: its words are in too many messages; search for fewer or rarer words", loom.MaxSearchTime)}
	}
	return hits, err
}
