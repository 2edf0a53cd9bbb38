package sqlstore

import (
	"context"
	"errors"
	"slices"

	"github.com/loomhq/loom"
)

// searchTimeError is the refusal of a search that ran out of time.
type searchTimeError struct{ refusal *loom.Error }

func (e searchTimeError) Error() string { return e.refusal.Error() }

func (e searchTimeError) Unwrap() []error { return []error{e.refusal, loom.ErrSearchTime} }

// RunSearch is how every engine runs a search: it checks q against the
// limits on a query and runs search with q and its terms (see Terms) and
// a context that ends once it has run MaxSearchTime. When that time runs
// out, search runs again with q.Newest set, for the newest matches only,
// within MaxSearchTime again, and those hits are marked Partial: a search
// is not refused because the machine is slow. Only when that runs out of
// time too is the query refused, with an EINVALID error that wraps
// ErrSearchTime. When ctx ends, search must stop and return an error
// that wraps ctx's.
func RunSearch(ctx context.Context, q loom.SearchQuery, search func(ctx context.Context, q loom.SearchQuery, terms []loom.Term) ([]loom.SearchHit, error)) ([]loom.SearchHit, error) {
	terms, err := q.Terms()
	if err != nil {
		return nil, err
	}
	// A fork or rewind reads the messages it inherited where they were
	// written, so one message can match in several sessions: each is one
	// hit, naming the others (AlsoIn). The engine is asked for more hits
	// than the limit so that the limit still holds after that.
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	q.Limit = 2 * limit
	hits, err := runTimed(ctx, q, terms, search)
	if outOfTime(ctx, err) && !q.Newest {
		q.Newest = true
		hits, err = runTimed(ctx, q, terms, search)
	}
	if err == nil && len(hits) == 0 && !q.Raw && !q.AnyWord && !q.Exact && wordsIn(terms) > 1 {
		// No message holds every term: the ones that hold some of them,
		// marked so, rather than nothing.
		q.AnyWord = true
		if hits, err = runTimed(ctx, q, terms, search); err == nil {
			for i := range hits {
				hits[i].Tier = loom.TierAnyWord
			}
		}
	}
	hits = OneHitPerMessage(hits, limit)
	if outOfTime(ctx, err) {
		return nil, searchTimeError{loom.Errorf(loom.EINVALID, "search stopped after %v: its words are in too many messages, or the machine is too busy; search for fewer or rarer words, or try again", 2*loom.MaxSearchTime)}
	}
	for i := range hits {
		hits[i].Partial = q.Newest
	}
	return hits, err
}

// wordsIn counts the words and phrases of terms: what any-word matching
// can choose among.
func wordsIn(terms []loom.Term) int {
	n := 0
	for _, t := range terms {
		if t.Phrase {
			n++
		} else {
			n += len(t.Words)
		}
	}
	return n
}

// runTimed runs search within MaxSearchTime.
func runTimed(ctx context.Context, q loom.SearchQuery, terms []loom.Term, search func(context.Context, loom.SearchQuery, []loom.Term) ([]loom.SearchHit, error)) ([]loom.SearchHit, error) {
	sctx, cancel := context.WithTimeoutCause(ctx, loom.MaxSearchTime, loom.ErrSearchTime)
	defer cancel()
	hits, err := search(sctx, q, terms)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(sctx), loom.ErrSearchTime) {
		return nil, loom.ErrSearchTime
	}
	return hits, err
}

// outOfTime reports whether err is a search's running out of its time,
// not of its caller's.
func outOfTime(ctx context.Context, err error) bool {
	return ctx.Err() == nil && errors.Is(err, loom.ErrSearchTime)
}

// OneHitPerMessage keeps one hit of each message, at the place of its
// best, and names the other sessions it matched in (forks and rewinds
// that inherited it) in AlsoIn; it returns at most limit hits. The hit
// names the oldest of those sessions (ids are time-ordered), the one the
// message was written in, so that every store, whatever order its engine
// returned equal hits in, names the same one.
func OneHitPerMessage(hits []loom.SearchHit, limit int) []loom.SearchHit {
	first := make(map[string]int, len(hits))
	out := hits[:0]
	for _, h := range hits {
		if i, ok := first[h.MessageID]; ok {
			o := &out[i]
			if h.SessionID == o.SessionID || slices.Contains(o.AlsoIn, h.SessionID) {
				continue
			}
			if h.SessionID < o.SessionID {
				o.AlsoIn = append(o.AlsoIn, o.SessionID)
				o.SessionID, o.SessionTitle, o.SessionKey, o.Seq = h.SessionID, h.SessionTitle, h.SessionKey, h.Seq
			} else {
				o.AlsoIn = append(o.AlsoIn, h.SessionID)
			}
			slices.Sort(o.AlsoIn)
			continue
		}
		if len(out) == limit {
			continue
		}
		first[h.MessageID] = len(out)
		out = append(out, h)
	}
	return out
}
