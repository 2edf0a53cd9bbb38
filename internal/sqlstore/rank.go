package sqlstore

import (
	"cmp"
	"slices"

	"github.com/loomhq/loom"
)

// How the tiers that rank by the words held (word forms, some words) put
// sessions in order: a question names what a session was about, and the
// session that answers it most often says so in more than one message.
// A session scores its best hit's score and spread of each of its next
// spreadHits best hits' scores. A hit in the period the query names (a
// date, a month) weighs inTime times its score.
const (
	spread     = 0.3
	spreadHits = 3
	inTime     = 2
	// sessionPool is the least number of hits of the tiers that rank
	// sessions a search asks the engine for: more than a page, so that a
	// session's other hits count.
	sessionPool = 400
)

// bySession orders hits, one tier's best first, by session: the best hit
// of each session, the sessions by their scores (see spread), then the
// other hits by their own. when, when set, is the period the query
// names. The order of equal scores is kept.
func bySession(hits []loom.SearchHit, when *period) []loom.SearchHit {
	if len(hits) < 2 {
		return hits
	}
	score := make([]float64, len(hits))
	for i, h := range hits {
		score[i] = max(h.Score, 0)
		if when.holds(h.CreatedAt) {
			score[i] *= inTime
		}
	}
	type session struct {
		best  int // the index of its best hit
		score float64
		rest  int // how many of its other hits count
	}
	byID := map[string]*session{}
	var order []*session
	idx := make([]int, len(hits))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	for _, i := range idx {
		s := byID[hits[i].SessionID]
		if s == nil {
			s = &session{best: i, score: score[i]}
			byID[hits[i].SessionID] = s
			order = append(order, s)
			continue
		}
		if s.rest < spreadHits {
			s.rest++
			s.score += spread * score[i]
		}
	}
	slices.SortStableFunc(order, func(a, b *session) int { return cmp.Compare(b.score, a.score) })
	out := make([]loom.SearchHit, 0, len(hits))
	first := make(map[int]bool, len(order))
	for _, s := range order {
		out = append(out, hits[s.best])
		first[s.best] = true
	}
	for _, i := range idx {
		if !first[i] {
			out = append(out, hits[i])
		}
	}
	return out
}
