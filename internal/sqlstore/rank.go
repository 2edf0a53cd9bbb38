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
// of each session, the sessions by their scores (see spread), and among
// them the other hits by their own, each after the best hits of the
// sessions that score at least as much. when, when set, is the period
// the query names, and named the weight of each session that holds the
// question's names (see Names), added to its best hit's score and to
// each of its hits' place among other sessions' hits, but not spread:
// a session holding a name comes before the sessions whose hits score
// up to that weight more, never before its own better hits. The order
// of equal scores is kept.
func bySession(hits []loom.SearchHit, when *period, named map[string]float64) []loom.SearchHit {
	if len(hits) < 2 {
		return hits
	}
	// base is a hit's own score, score its place among other sessions'.
	base, score := make([]float64, len(hits)), make([]float64, len(hits))
	for i, h := range hits {
		base[i] = max(h.Score, 0)
		if when.holds(h.CreatedAt) {
			base[i] *= inTime
		}
		score[i] = base[i] + named[h.SessionID]
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
			s.score += spread * base[i]
		}
	}
	slices.SortStableFunc(order, func(a, b *session) int { return cmp.Compare(b.score, a.score) })
	first := make(map[int]bool, len(order))
	for _, s := range order {
		first[s.best] = true
	}
	// The sessions' best hits in the sessions' order, merged with the
	// other hits by their own scores: another hit of a session comes
	// before the best hit of a session that scores less than it does,
	// so that a page across many sessions is not filled with each
	// session's one match of a common word before the second message
	// of the session that answers. A session's other hits score at most
	// its own score, so each session still comes first with its best
	// hit, and the sessions' order is kept.
	out := make([]loom.SearchHit, 0, len(hits))
	next := 0
	for _, i := range idx {
		if first[i] {
			continue
		}
		for next < len(order) && order[next].score >= score[i] {
			out = append(out, hits[order[next].best])
			next++
		}
		out = append(out, hits[i])
	}
	for _, s := range order[next:] {
		out = append(out, hits[s.best])
	}
	return out
}
