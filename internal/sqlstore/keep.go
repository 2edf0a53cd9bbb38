package sqlstore

import "github.com/loomhq/loom"

// Kept applies q.Keep to an engine's ranked hits and returns the indexes
// in hits of those it kept, in its order, so that the engine makes the
// snippets of those alone; every index when q.Keep is nil.
func Kept(q loom.SearchQuery, hits []loom.SearchHit) []int {
	idx := make([]int, 0, len(hits))
	if q.Keep == nil {
		for i := range hits {
			idx = append(idx, i)
		}
		return idx
	}
	at := make(map[string][]int, len(hits))
	for i, h := range hits {
		k := h.SessionID + "\x00" + h.MessageKey()
		at[k] = append(at[k], i)
	}
	for _, h := range q.Keep(append([]loom.SearchHit(nil), hits...)) {
		k := h.SessionID + "\x00" + h.MessageKey()
		if is := at[k]; len(is) > 0 {
			idx, at[k] = append(idx, is[0]), is[1:]
		}
	}
	return idx
}
