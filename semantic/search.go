package semantic

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/vecindex"
)

// Mode says how a search ranks.
type Mode int

const (
	// Fused ranks by keywords and, where vectors are at hand, by meaning,
	// fused by reciprocal rank.
	Fused Mode = iota
	// Keyword ranks by keywords only (--keyword).
	Keyword
	// Meaning ranks by meaning only (--semantic).
	Meaning
)

// Fusion's constants (see Fuse).
const (
	// RRFK is the k of reciprocal rank fusion: a hit's score is the
	// sum, over the rankings it is in, of its weight/(RRFK + its rank
	// from 1).
	RRFK = 10
	// FuseDepth is how many hits of each ranking are fused, whatever
	// the limit: the fused order of the first FuseDepth does not
	// depend on how many are asked for.
	FuseDepth = 50
	// agreeDepth is how many of each ranking's first hits are compared
	// to weigh the ranking by meaning (see meaningWeight).
	agreeDepth = 20
)

// QueryTimeout bounds the embedding of a query: past it, the search is
// by keywords only.
const QueryTimeout = 5 * time.Second

// ErrNoEmbeddings is the refusal of a search by meaning only where no
// embeddings endpoint is at hand.
var ErrNoEmbeddings = loom.Errorf(loom.EINVALID, "search by meaning needs an embeddings endpoint: set [embeddings] url in config.toml, or run Ollama with nomic-embed-text (see docs/search.md)")

// Searcher runs searches over one store: keyword search (the store's
// own Search, with its tiers) fused with the nearest vectors.
type Searcher struct {
	// Store is searched by keywords, and by meaning with its vectors
	// service (none: by keywords only).
	Store loom.Reader
	// Client embeds queries; nil ranks by keywords only.
	Client *embedding.Client

	// shared, when set, is the searcher whose index of vectors this
	// one ranks by (Through).
	shared *Searcher

	mu     sync.RWMutex
	index  *vecindex.Index
	model  string
	loaded bool
}

// Through returns a searcher that ranks as s does, with s's client and
// s's index of vectors, but finds its hits, and makes their snippets,
// through st: a view of s's store, such as a secrets gate over it. A
// tool that reads the store through a gate searches through it too, and
// the vectors are loaded once, for every view.
func (s *Searcher) Through(st loom.Reader) *Searcher {
	if st == s.Store {
		return s
	}
	ix := s
	if s.shared != nil {
		ix = s.shared
	}
	return &Searcher{Store: st, Client: s.Client, shared: ix}
}

// Result is a search's hits and how they were ranked.
type Result struct {
	Hits []loom.SearchHit
	// ByMeaning is set when vectors took part in the ranking.
	ByMeaning bool
	// Note, when set, is one line saying why meaning took no part
	// though it could have (the endpoint failed).
	Note string
	// Closest is set when a search by keywords ran and no message holds
	// every word of the query: its hits are those of the tiers after the
	// first (loom.SearchHit.Tier). A search by meaning alone says
	// nothing of the words, and never sets it.
	Closest bool
}

// Search runs q ranked as mode says.
func (s *Searcher) Search(ctx context.Context, q loom.SearchQuery, mode Mode) (Result, error) {
	vs := s.Store.Reads().Vectors
	canVector := vs != nil
	if mode == Meaning && (s.Client == nil || !canVector) {
		return Result{}, ErrNoEmbeddings
	}
	if mode == Keyword || s.Client == nil || !canVector || q.Raw {
		hits, err := s.Store.Search(ctx, q)
		return Result{Hits: hits, Closest: closest(hits)}, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	if mode == Fused {
		// One set of candidates, whatever the limit.
		q.Limit = max(limit, FuseDepth)
	}
	vhits, err := s.vectorHits(ctx, vs, q, q.Limit)
	if err != nil {
		if mode == Meaning || ctx.Err() != nil {
			return Result{}, err
		}
		q.Limit = limit
		hits, kerr := s.Store.Search(ctx, q)
		return Result{Hits: hits, Closest: closest(hits), Note: fmt.Sprintf("ranked by keywords only: %v", err)}, kerr
	}
	if mode == Meaning {
		return Result{Hits: vhits, ByMeaning: vhits != nil}, nil
	}
	khits, err := s.Store.Search(ctx, q)
	if err != nil {
		return Result{}, err
	}
	if vhits == nil {
		khits = khits[:min(limit, len(khits))]
		return Result{Hits: khits, Closest: closest(khits)}, nil
	}
	return Result{Hits: Fuse(khits, vhits, limit), ByMeaning: true, Closest: closest(khits)}, nil
}

// closest reports whether hits, a keyword search's, hold no message
// that holds every word: they come first when there are any.
func closest(hits []loom.SearchHit) bool { return len(hits) > 0 && hits[0].Tier != "" }

// vectorHits are the hits of the vectors nearest q's text that pass q's
// filters, best first; nil when the store has no vectors of the
// client's model.
func (s *Searcher) vectorHits(ctx context.Context, vs loom.VectorReader, q loom.SearchQuery, limit int) ([]loom.SearchHit, error) {
	// The index is the shared one of a view's searcher, read from the
	// store below the view; the hits are made through the view.
	ix, ivs := s, vs
	if s.shared != nil {
		ix = s.shared
		if ivs = ix.Store.Reads().Vectors; ivs == nil {
			return nil, nil
		}
	}
	x, err := ix.load(ctx, ivs)
	if err != nil || x == nil {
		return nil, err
	}
	qctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	fs, err := s.Client.Embed(qctx, []string{queryText(s.Client.Model(), q.Text)})
	if err != nil {
		return nil, err
	}
	// Filters (a project, a role) leave out some of the nearest: ask
	// for more than the limit.
	want := max(10*limit, 200)
	ix.mu.RLock()
	ids, scores, err := x.Search(fs[0], want)
	ix.mu.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("search by meaning: %w", err)
	}
	ids, scores = unique(ids, scores)
	// A vector at a right angle to the query's, or further, shares
	// nothing with it.
	for len(scores) > 0 && scores[len(scores)-1] <= 0 {
		ids, scores = ids[:len(ids)-1], scores[:len(scores)-1]
	}
	vq := q
	vq.Limit = limit
	hits, err := vs.VectorHits(ctx, vq, ids, scores)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Tier = loom.TierMeaning
	}
	return hits, nil
}

// unique keeps the first of each id (a body embedded again after its
// text changed is in a running index twice).
func unique(ids []int64, scores []float64) ([]int64, []float64) {
	seen := make(map[int64]bool, len(ids))
	n := 0
	for i, id := range ids {
		if !seen[id] {
			seen[id] = true
			ids[n], scores[n] = id, scores[i]
			n++
		}
	}
	return ids[:n], scores[:n]
}

// load reads the store's vectors into the index once; nil when they
// are not of the client's model (none yet, or another's).
func (s *Searcher) load(ctx context.Context, vs loom.VectorReader) (*vecindex.Index, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		var x *vecindex.Index
		model, err := vs.Vectors(ctx, func(v loom.Vector) error {
			if x == nil {
				x = vecindex.New(len(v.Data))
			}
			if len(v.Data) != x.Dims() {
				return nil // not of this model's length: left out
			}
			return x.Add(v.ID, v.Data)
		})
		if err != nil {
			return nil, err
		}
		s.index, s.model, s.loaded = x, model, true
	}
	if s.model != s.Client.Model() {
		return nil, nil
	}
	return s.index, nil
}

// Add puts newly stored vectors of model into a loaded index (an
// Embedder's OnStored): a model other than the index's starts it over.
func (s *Searcher) Add(model string, vecs []loom.Vector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		return
	}
	if model != s.model {
		s.index, s.model = nil, model
	}
	for _, v := range vecs {
		if s.index == nil {
			s.index = vecindex.New(len(v.Data))
		}
		s.index.Add(v.ID, v.Data)
	}
}

// Fuse ranks the hits of two rankings of one query, by keywords and by
// meaning, and returns at most limit of them. It never ranks worse than
// the keywords alone for an embedder that knows nothing of the text:
//
//   - The messages that hold every word of the query (keyword hits of no
//     tier) come first, in keyword order, and so does the keyword
//     ranking's first hit: meaning never displaces them.
//   - The other hits of the first FuseDepth of each ranking are fused by
//     weighted reciprocal rank: each scores 1/(RRFK + its keyword rank)
//     plus w/(RRFK + its rank by meaning), ranks from 1, a ranking it is
//     not in adding nothing, ties in keyword order. The weight w of
//     meaning is that of its agreement with the keywords on this query
//     (meaningWeight): an embedder whose nearest messages are not among
//     the keyword ranking's first more than chance puts them there
//     weighs nothing, and the fused order is the keywords'.
//   - Hits past the first FuseDepth of either ranking follow, keyword
//     hits first: so the fused order of the first FuseDepth depends on
//     neither limit.
//
// A message in both rankings takes its keyword hit (its snippet marks
// the words) and keeps its keyword tier; its score is its fused score.
func Fuse(keyword, meaning []loom.SearchHit, limit int) []loom.SearchHit {
	type entry struct {
		hit   loom.SearchHit
		score float64
		order int
		first bool
	}
	kw, mn := keyword[:min(FuseDepth, len(keyword))], meaning[:min(FuseDepth, len(meaning))]
	w := meaningWeight(kw, mn)
	byMsg := map[string]*entry{}
	var all []*entry
	add := func(hits []loom.SearchHit, weight float64, kw bool) {
		for rank, h := range hits {
			key := h.MessageKey()
			e := byMsg[key]
			if e == nil {
				e = &entry{hit: h, order: len(all), first: kw && (h.Tier == "" || rank == 0)}
				byMsg[key] = e
				all = append(all, e)
			}
			e.score += weight / float64(RRFK+rank+1)
		}
	}
	add(kw, 1, true)
	add(mn, w, false)
	slices.SortStableFunc(all, func(a, b *entry) int {
		if a.first != b.first {
			if a.first {
				return -1
			}
			return 1
		}
		if a.first {
			return a.order - b.order
		}
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return a.order - b.order
	})
	out := make([]loom.SearchHit, 0, min(limit, len(keyword)+len(meaning)))
	for _, e := range all {
		e.hit.Score = e.score
		out = append(out, e.hit)
	}
	// The rest of each ranking, past what was fused.
	for _, rest := range [][]loom.SearchHit{keyword[len(kw):], meaning[len(mn):]} {
		for _, h := range rest {
			if byMsg[h.MessageKey()] == nil {
				byMsg[h.MessageKey()] = &entry{}
				out = append(out, h)
			}
		}
	}
	return out[:min(limit, len(out))]
}

// meaningWeight is the weight of the ranking by meaning in Fuse: how
// many of the messages the two rankings put among their first
// agreeDepth they share, past what two unrelated rankings of the same
// messages share by chance (and two more): 0 up to there, 1 for half of
// them more. Chance is n²/N for the first n of N messages; N is taken
// from the rankings: where the ranking by meaning holds fewer than
// FuseDepth, it holds every message within a right angle of the query,
// about half of those searched; else N is at least 10·FuseDepth.
func meaningWeight(keyword, meaning []loom.SearchHit) float64 {
	n := min(agreeDepth, len(keyword), len(meaning))
	if n == 0 {
		return 0
	}
	in := make(map[string]bool, len(keyword))
	for _, h := range keyword {
		in[h.MessageKey()] = true
	}
	shared, union := 0, len(keyword)
	for i, h := range meaning {
		switch {
		case !in[h.MessageKey()]:
			union++
		case i < n && slices.ContainsFunc(keyword[:n], func(k loom.SearchHit) bool { return k.MessageKey() == h.MessageKey() }):
			shared++
		}
	}
	all := max(union, 10*FuseDepth)
	if len(meaning) < FuseDepth {
		all = max(union, 2*len(meaning))
	}
	chance := float64(n*n) / float64(all)
	return max(0, min(1, (float64(shared)-chance-2)/(float64(n)/2)))
}

// ModeOf is the mode that the flags or parameters semantic and keyword
// ask for; both at once is an EINVALID error.
func ModeOf(semantic, keyword bool) (Mode, error) {
	switch {
	case semantic && keyword:
		return Fused, loom.Errorf(loom.EINVALID, "semantic and keyword cannot be used together: each forces one ranking")
	case semantic:
		return Meaning, nil
	case keyword:
		return Keyword, nil
	}
	return Fused, nil
}
