package sqlstore

import (
	"slices"

	"github.com/loomhq/loom"
)

// VectorOrder puts the hits of a search by meaning in order: byBody holds
// the messages of each body that passed the search's filters; ids are the
// bodies best first, with their scores. A body's messages are ordered
// newest first, each a hit with its body's score, one per message (see
// OneHitPerMessage: a message a fork inherited names the fork in
// AlsoIn). It returns at most limit hits (20 when limit is 0), and the
// body of each.
func VectorOrder(ids []int64, scores []float64, byBody map[int64][]loom.SearchHit, limit int) ([]loom.SearchHit, []int64) {
	if limit <= 0 {
		limit = 20
	}
	var hits []loom.SearchHit
	var bodies []int64
	for i, id := range ids {
		ms := byBody[id]
		slices.SortStableFunc(ms, func(a, b loom.SearchHit) int { return b.CreatedAt.Compare(a.CreatedAt) })
		for _, h := range OneHitPerMessage(ms, len(ms)) {
			if len(hits) == limit {
				return hits, bodies
			}
			h.Score = scores[i]
			hits = append(hits, h)
			bodies = append(bodies, id)
		}
	}
	return hits, bodies
}
