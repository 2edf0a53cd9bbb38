package sqlstore

import (
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
)

// Window returns the seqs a message query reads from: lo to hi, after
// q.After and before q.Before.
func Window(q loom.MessageQuery) (lo, hi int64) {
	lo, hi = 1, span.OpenSeq
	if q.After > 0 {
		lo = q.After + 1
	}
	if q.Before > 0 {
		hi = q.Before - 1
	}
	return lo, hi
}
