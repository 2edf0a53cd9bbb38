package sqlstore

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
)

// A query whose words are in more messages than an engine ranks at once
// (its RankDepth) is ranked the way search engines rank a question of
// common words: its rare words select the messages to rank and its
// common words only add to their scores, so that the work grows with the
// messages that hold a rare word, not with the messages that hold
// "think". The functions here are the part of that both engines share.

// Selecting returns which of a query's terms select the messages to
// rank, given how many messages hold each (counts, in the terms' order):
// the rarest, taken while the messages they hold together are at most
// depth. A term whose count is negative (not counted) never selects.
// None selects when even the rarest holds more than depth.
func Selecting(counts []int64, depth int64) []bool {
	order := make([]int, len(counts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(counts[a], counts[b]) })
	sel := make([]bool, len(counts))
	var sum int64
	for _, i := range order {
		if counts[i] < 0 {
			continue
		}
		if sum += counts[i]; sum > depth {
			break
		}
		sel[i] = true
	}
	return sel
}

// IDF is bm25's inverse document frequency of a term held by n of total
// messages, at least 0.000001, as FTS5 computes it: a term in most
// messages weighs next to nothing.
func IDF(total, n int64) float64 {
	n = min(n, total)
	return max(math.Log((float64(total-n)+0.5)/(float64(n)+0.5)), 0.000001)
}

// Scored is a message's body, by its id, and its score.
type Scored struct {
	Body  int64
	Score float64
}

// MergeBroad returns the best limit of a broad query's ranked messages:
// selected, every message that holds a selecting term, and pool, the
// newest of the query's other matches (RankDepth of them at most), each
// scored by the same terms; best first, a tie newest first (the higher
// body id). bound is the most a message holding no selecting term can
// score. partial is true when the answer may not be the best of every
// match: a message older than the pool, never ranked, may score up to
// bound, more than the last of the best (or there are fewer than limit).
func MergeBroad(selected, pool []Scored, limit int, bound float64) (best []Scored, partial bool) {
	seen := make(map[int64]bool, len(selected)+len(pool))
	all := make([]Scored, 0, len(selected)+len(pool))
	for _, s := range slices.Concat(selected, pool) {
		if !seen[s.Body] {
			seen[s.Body] = true
			all = append(all, s)
		}
	}
	slices.SortFunc(all, func(a, b Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(b.Body, a.Body)
	})
	best = all[:min(limit, len(all))]
	return best, len(best) < limit || best[len(best)-1].Score < bound
}

// Coordinated is score, of a message that holds held of a query's terms
// terms, weighed by the share of the terms it holds: a message in which
// several of a question's words meet ranks above one that says a single
// word of it many times, or one word that is rare in the store but
// common in a project's code (a file read, a tool's output). It is the
// coordination factor of classic vector-space ranking; a query of one
// term, or a message that holds every term, keeps its score.
func Coordinated(score float64, held, terms int) float64 {
	if terms <= 1 || held >= terms {
		return score
	}
	return score * float64(max(held, 1)) / float64(terms)
}

// Counted reports whether a term of an any-word query counts towards the
// share of the terms a message holds (Coordinated): every term but a stop
// word alone, which PostgreSQL drops from every query and most messages
// hold.
func Counted(t loom.Term) bool {
	return len(t.Alts) > 0 || t.Phrase || t.Prefix || len(t.Words) != 1 || !english.IsStopWord(strings.ToLower(t.Words[0]))
}
