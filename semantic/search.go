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

// RRFK is the k of reciprocal rank fusion: a hit's score is the sum,
// over the rankings it is in, of 1/(RRFK + its rank from 1).
const RRFK = 60

// QueryTimeout bounds the embedding of a query: past it, the search is
// by keywords only.
const QueryTimeout = 5 * time.Second

// ErrNoEmbeddings is the refusal of a search by meaning only where no
// embeddings endpoint is at hand.
var ErrNoEmbeddings = loom.Errorf(loom.EINVALID, "search by meaning needs an embeddings endpoint: set [embeddings] url in config.toml, or run Ollama with nomic-embed-text (see docs/search.md)")

// Searcher runs searches over one store: keyword search (the store's
// own Search, with its tiers) fused with the nearest vectors.
type Searcher struct {
	Store loom.Store
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
func (s *Searcher) Through(st loom.Store) *Searcher {
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
	vs, canVector := s.Store.(loom.VectorStore)
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
	vhits, err := s.vectorHits(ctx, vs, q, limit)
	if err != nil {
		if mode == Meaning || ctx.Err() != nil {
			return Result{}, err
		}
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
func (s *Searcher) vectorHits(ctx context.Context, vs loom.VectorStore, q loom.SearchQuery, limit int) ([]loom.SearchHit, error) {
	// The index is the shared one of a view's searcher, read from the
	// store below the view; the hits are made through the view.
	ix, ivs := s, vs
	if s.shared != nil {
		ix = s.shared
		if ivs, _ = ix.Store.(loom.VectorStore); ivs == nil {
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
func (s *Searcher) load(ctx context.Context, vs loom.VectorStore) (*vecindex.Index, error) {
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

// Fuse ranks the hits of two rankings of one query by reciprocal rank:
// each message's score is the sum of 1/(RRFK + rank) over the rankings
// it is in, ranks from 1. Ties keep the keyword ranking's order, then
// the other's. A message in both takes its keyword hit (its snippet
// marks the words) and keeps its keyword tier. The messages that hold
// every word of the query (keyword hits of no tier) come first, in that
// order: no ranking by meaning puts a message that holds them below one
// that does not. It returns at most limit hits.
func Fuse(keyword, meaning []loom.SearchHit, limit int) []loom.SearchHit {
	type entry struct {
		hit   loom.SearchHit
		score float64
		order int
	}
	byMsg := map[string]*entry{}
	var all []*entry
	add := func(hits []loom.SearchHit) {
		for rank, h := range hits {
			key := h.SessionID + "\x00" + h.MessageID
			e := byMsg[key]
			if e == nil {
				e = &entry{hit: h, order: len(all)}
				byMsg[key] = e
				all = append(all, e)
			}
			e.score += 1 / float64(RRFK+rank+1)
		}
	}
	add(keyword)
	add(meaning)
	slices.SortStableFunc(all, func(a, b *entry) int {
		if ea, eb := a.hit.Tier == "", b.hit.Tier == ""; ea != eb {
			if ea {
				return -1
			}
			return 1
		}
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return a.order - b.order
	})
	out := make([]loom.SearchHit, 0, min(limit, len(all)))
	for _, e := range all[:min(limit, len(all))] {
		e.hit.Score = e.score
		out = append(out, e.hit)
	}
	return out
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
