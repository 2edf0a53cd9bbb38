package sqlstore

import (
	"cmp"
	"math/bits"
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
// the query names. The order of equal scores is kept.
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
		words together
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
			s.words.add(hits[i].Held, score[i])
			byID[hits[i].SessionID] = s
			order = append(order, s)
			continue
		}
		s.words.add(hits[i].Held, score[i])
		if s.rest < spreadHits {
			s.rest++
			s.score += spread * score[i]
		}
	}
	for _, s := range order {
		s.score += s.words.more(hits[s.best].Held, score[s.best])
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

// together is what the hits of one session hold of an any-word query's
// words (loom.SearchHit.Held): their union, and for each word the most
// one hit holding it is worth a word (its score shared among the words
// it holds; see more).
type together struct {
	held  uint64
	worth []float64 // by word, made for the first hit that says
}

// add counts a hit that holds the words of held and scores score.
func (t *together) add(held uint64, score float64) {
	n := bits.OnesCount64(held)
	if n == 0 {
		return
	}
	if t.worth == nil {
		t.worth = make([]float64, 64)
	}
	t.held |= held
	// The score is coordinated (Coordinated: its words' worth times
	// n/terms); a word's share of what it is worth uncoordinated is
	// score*terms/n/n, and terms cancels out in more.
	w := score / float64(n*n)
	for rest := held; rest != 0; rest &= rest - 1 {
		i := bits.TrailingZeros64(rest)
		t.worth[i] = max(t.worth[i], w)
	}
}

// more is what a session gains from the words its hits hold together
// beyond those its best hit (holding best, scoring score) holds: it is
// scored as if that hit held them too, each worth what the best of the
// session's hits holding it is worth a word, and weighed by the share
// of the query's words they make together (Coordinated). A question
// that names two people and a topic finds them together in the session
// where they talk, in no single message of it, while another session
// may hold a message with one name and a common word: the first now
// ranks above the second. A session whose best hit holds every word its
// hits hold, and every hit of a search that does not say which words it
// holds, gains nothing.
func (t *together) more(best uint64, score float64) float64 {
	b := bits.OnesCount64(best)
	if b == 0 || t.held == best {
		return 0
	}
	sum := score / float64(b)
	for rest := t.held &^ best; rest != 0; rest &= rest - 1 {
		sum += t.worth[bits.TrailingZeros64(rest)]
	}
	return float64(bits.OnesCount64(t.held))*sum - score
}
