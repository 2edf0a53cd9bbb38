package sqlstore

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/loomhq/loom"
)

// searchTimeError is the refusal of a search that ran out of time.
type searchTimeError struct{ refusal *loom.Error }

func (e searchTimeError) Error() string { return e.refusal.Error() }

func (e searchTimeError) Unwrap() []error { return []error{e.refusal, loom.ErrSearchTime} }

// RunSearch is how every engine runs a search: it checks q against the
// limits on a query and runs search with q and its terms (see Terms) and
// a context that ends once it has run MaxSearchTime. A search that runs out of that time before it
// has ranked a hit is refused, with an EINVALID error that wraps
// ErrSearchTime: nothing found in time is never answered with other
// messages in the place of hits. When ctx ends, search must stop and
// return an error that wraps ctx's.
//
// A plain query (not raw, exact, any-word or over titles) that finds
// fewer hits than its limit goes on through the tiers (loom.TierWordForms
// and those after it), each given the terms it matches: search must
// match them as Term describes (alternatives, prefixes), any of them
// with q.AnyWord, and session titles with q.Titles. Their hits fill the
// page in tier order, each message once, marked with its tier. The tiers
// share one more MaxSearchTime, ending at q.Deadline at the latest: when
// it runs out, the hits of the tiers that ended before it are returned,
// in their order, each marked Partial; when there are none, the search is
// refused as above. A plain query over the limits of loom.ParseQuery is
// not refused: the tiers that need not every word run with its first
// words.
//
// The some-words tier weighs the sessions that hold the question's names
// (see Names) by what namer finds; a nil namer weighs none.
func RunSearch(ctx context.Context, q loom.SearchQuery, search func(ctx context.Context, q loom.SearchQuery, terms []loom.Term) ([]loom.SearchHit, error), namer Namer) ([]loom.SearchHit, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	terms, err := q.Terms()
	full := true
	if err != nil {
		if q.Raw || q.Exact || q.AnyWord || q.Titles {
			return nil, err
		}
		// A plain query is never refused: one over the limits goes
		// through the tiers that need not every word, with its first
		// words.
		terms, full = cutQuery(q.Text), false
	}
	var hits []loom.SearchHit
	if full {
		if hits, err = rankedHits(ctx, q, terms, limit, search); err != nil {
			return nil, err
		}
	}
	if q.Raw || q.Exact || q.AnyWord || q.Titles || len(hits) >= limit || q.Newest {
		return hits, nil
	}
	// Fewer hits than a page: the tiers, in order, within one more
	// MaxSearchTime between them; a tier that runs out of it ends the
	// search with what was found.
	tctx, cancel := context.WithDeadlineCause(ctx, budgetEnd(q, loom.MaxSearchTime), loom.ErrSearchTime)
	defer cancel()
	pg := newTierPage(hits, limit)
	pg.weighNames(tctx, q, namer)
	// A date the query names is looked for in the times of messages,
	// not in their words (see bySession).
	when, rest := namedPeriod(q.Text)
	pg.when = when
	if when != nil && full {
		if t, err := loom.ParseQuery(rest); err == nil && len(contentWords(t)) > 0 {
			terms = t
		}
	}
	partial, err := pg.run(ctx, tctx, q, tiers(terms, full), search)
	if err != nil {
		return nil, err
	}
	pg.addDated()
	return pg.finish(partial)
}

// tierHits are the hits one tier found.
type tierHits struct {
	t    tier
	hits []loom.SearchHit
}

// tierPage is the page of hits of a search that goes on through the
// tiers: each message once, and a title's hit only for a session no
// hit names yet, up to limit. With a date named (when), the hits of
// every tier are kept apart (dated) until all have run.
type tierPage struct {
	limit    int
	when     *period
	hits     []loom.SearchHit
	seen     map[string]bool
	sessions map[string]bool
	dated    []tierHits
	// names, when set, delivers the weight of each session that holds
	// the question's names (weighNames), and named holds it once read.
	names <-chan namesWeighed
	named map[string]float64
}

// namesWeighed is what nameWeights returned.
type namesWeighed struct {
	named map[string]float64
	err   error
}

// weighNames starts weighing the names of q (Names) with namer, within
// ctx, beside the tiers before the one that needs them (some words): a
// search across projects only, and one in one session never. Inside one
// project its sessions mostly share the names (a conversation's
// speakers, a repository's tools), and weighing them there changed no
// benchmark's figure by more than a question or two while it cost each
// question the look-ups.
func (pg *tierPage) weighNames(ctx context.Context, q loom.SearchQuery, namer Namer) {
	names := Names(q.Text)
	if namer == nil || len(names) == 0 || q.ProjectID != "" || q.SessionID != "" {
		return
	}
	ch := make(chan namesWeighed, 1)
	pg.names = ch
	go func() {
		named, err := nameWeights(ctx, namer, q, names)
		ch <- namesWeighed{named, err}
	}()
}

// newTierPage is the page that the tiers fill after hits.
func newTierPage(hits []loom.SearchHit, limit int) *tierPage {
	pg := &tierPage{limit: limit, hits: hits, seen: make(map[string]bool, limit), sessions: make(map[string]bool, limit)}
	for _, h := range hits {
		pg.seen[h.MessageKey()], pg.sessions[h.SessionID] = true, true
	}
	return pg
}

// add adds hit h of tier t to the page, unless the page is full or
// holds it.
func (pg *tierPage) add(h loom.SearchHit, t tier) {
	// A title names a session: it adds a session no message found
	// yet.
	if len(pg.hits) == pg.limit || pg.seen[h.MessageKey()] || (t.titles && pg.sessions[h.SessionID]) {
		return
	}
	h.Tier = t.name
	pg.seen[h.MessageKey()], pg.sessions[h.SessionID] = true, true
	pg.hits = append(pg.hits, h)
}

// filled reports whether the page, with the tiers' hits kept apart,
// holds limit hits.
func (pg *tierPage) filled() bool {
	if pg.when == nil {
		return len(pg.hits) == pg.limit
	}
	n := len(pg.hits)
	for _, r := range pg.dated {
		n += len(r.hits)
	}
	return n >= pg.limit
}

// run runs the tiers ts in order, each within tctx, until the page is
// full. With a date named, the hits of the tiers that rank sessions in
// that time come first, in the tiers' order; so every such tier runs
// (but the fuzzy one, once the page is full). It reports whether a tier
// ran out of time (partial).
func (pg *tierPage) run(ctx, tctx context.Context, q loom.SearchQuery, ts []tier, search func(ctx context.Context, q loom.SearchQuery, terms []loom.Term) ([]loom.SearchHit, error)) (bool, error) {
	for _, t := range ts {
		if pg.when != nil && !t.sessions && !t.titles && pg.filled() {
			break
		}
		var err error
		if t.anyWord && t.sessions && pg.names != nil {
			w := <-pg.names
			pg.names, pg.named, err = nil, w.named, w.err
		}
		var th []loom.SearchHit
		tq := pg.tierQuery(q, t)
		if err == nil {
			th, err = search(tctx, tq, t.terms)
		}
		if err != nil {
			if ctx.Err() == nil && errors.Is(context.Cause(tctx), loom.ErrSearchTime) {
				// Out of time: what the tiers before this one found,
				// said to be partial; never other messages instead.
				return true, nil
			}
			return false, err
		}
		th = OneHitPerMessage(th, tq.Limit)
		if pg.when != nil {
			pg.dated = append(pg.dated, tierHits{t, th})
			continue
		}
		for _, h := range th {
			pg.add(h, t)
		}
		if pg.filled() {
			break
		}
	}
	return false, nil
}

// tierQuery is q as tier t runs it.
func (pg *tierPage) tierQuery(q loom.SearchQuery, t tier) loom.SearchQuery {
	limit, when, named := pg.limit, pg.when, pg.named
	if !t.anyWord {
		named = nil
	}
	tq := q
	tq.AnyWord, tq.Titles, tq.Limit = t.anyWord, t.titles, 2*limit
	if t.sessions {
		// Many hits ranked, the page chosen from them by session
		// before the engine makes any snippet.
		tq.Limit = max(tq.Limit, sessionPool)
		tq.Keep = func(hits []loom.SearchHit) []loom.SearchHit {
			hits = OneHitPerMessage(hits, len(hits))
			if !loom.Partial(hits) {
				hits = bySession(hits, when, named)
			}
			if when != nil {
				slices.SortStableFunc(hits, func(a, b loom.SearchHit) int {
					return boolOrder(when.holds(a.CreatedAt), when.holds(b.CreatedAt))
				})
			}
			return hits[:min(len(hits), 2*limit)]
		}
	}
	return tq
}

// addDated adds the hits kept apart for a named date: first those in
// that time of the tiers that rank sessions, then all, in the tiers'
// order.
func (pg *tierPage) addDated() {
	for _, r := range pg.dated {
		if r.t.sessions {
			for _, h := range r.hits {
				if pg.when.holds(h.CreatedAt) {
					pg.add(h, r.t)
				}
			}
		}
	}
	for _, r := range pg.dated {
		for _, h := range r.hits {
			pg.add(h, r.t)
		}
	}
}

// finish returns the page, each hit marked Partial when a tier ran out
// of time (partial) or ranked part of its matches; a partial page with
// no hit is refused.
func (pg *tierPage) finish(partial bool) ([]loom.SearchHit, error) {
	hits := pg.hits
	// A tier that ranked part of its matches (a bound on its work)
	// makes the answer partial too.
	partial = partial || slices.ContainsFunc(hits, func(h loom.SearchHit) bool { return h.Partial })
	if partial {
		if len(hits) == 0 {
			return nil, searchTimeError{loom.Errorf(loom.EINVALID, "search stopped after %v before its tiers had ranked any hit: the machine is too busy, or its words are in too many messages; try again, or search for fewer or rarer words", loom.MaxSearchTime)}
		}
		for i := range hits {
			hits[i].Partial = true
		}
	}
	return hits, nil
}

// rankedHits runs q's own match (every term, or q.AnyWord's or
// q.Titles'), within the bounds RunSearch describes, and returns at most
// limit hits, one per message.
func rankedHits(ctx context.Context, q loom.SearchQuery, terms []loom.Term, limit int, search func(context.Context, loom.SearchQuery, []loom.Term) ([]loom.SearchHit, error)) ([]loom.SearchHit, error) {
	// A fork or rewind reads the messages it inherited where they were
	// written, so one message can match in several sessions: each is one
	// hit, naming the others (AlsoIn). The engine is asked for more hits
	// than the limit so that the limit still holds after that.
	q.Limit = 2 * limit
	// Not q.Deadline: a first tier cut short finds nothing at all, so it
	// runs while its caller waits (ctx) and MaxRankTime allow: a busy
	// machine makes the answer slower, never another.
	hits, err := runTimed(ctx, time.Now().Add(loom.MaxRankTime), q, terms, search)
	if outOfTime(ctx, err) {
		return nil, searchTimeError{loom.Errorf(loom.EINVALID, "search stopped after %v before it had ranked any hit: the machine is too busy, or its words are in too many messages; try again, or search for fewer or rarer words", loom.MaxRankTime)}
	}
	if err != nil {
		return nil, err
	}
	hits = OneHitPerMessage(hits, limit)
	for i := range hits {
		// The newest matches a caller asked for are marked so
		// (loom.SearchQuery.Newest), as are hits the engine ranked
		// among part of the matches only.
		hits[i].Partial = hits[i].Partial || q.Newest
		if q.AnyWord {
			hits[i].Tier = loom.TierAnyWord
		}
	}
	return hits, nil
}

// budgetEnd is when a stage of q's search that may run for d from now
// must end: then, or at q.Deadline when that comes first.
func budgetEnd(q loom.SearchQuery, d time.Duration) time.Time {
	end := time.Now().Add(d)
	if !q.Deadline.IsZero() && q.Deadline.Before(end) {
		end = q.Deadline
	}
	return end
}

// runTimed runs search until end.
func runTimed(ctx context.Context, end time.Time, q loom.SearchQuery, terms []loom.Term, search func(context.Context, loom.SearchQuery, []loom.Term) ([]loom.SearchHit, error)) ([]loom.SearchHit, error) {
	sctx, cancel := context.WithDeadlineCause(ctx, end, loom.ErrSearchTime)
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

// OneHitPerMessage keeps one hit of each message (loom.SearchHit's
// MessageKey), at the place of its best, and names the other sessions it
// matched in (forks and rewinds that inherited it) in AlsoIn; it returns
// at most limit hits. The hit names the oldest of those sessions (ids
// are time-ordered), the one the message was written in, so that every
// store, whatever order its engine returned equal hits in, names the
// same one. Messages of one id in two sessions that do not share them
// are two hits.
func OneHitPerMessage(hits []loom.SearchHit, limit int) []loom.SearchHit {
	first := make(map[string]int, len(hits))
	out := hits[:0]
	for _, h := range hits {
		if i, ok := first[h.MessageKey()]; ok {
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
		first[h.MessageKey()] = len(out)
		out = append(out, h)
	}
	return out
}

// boolOrder sorts true before false.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
