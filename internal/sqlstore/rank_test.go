package sqlstore

import (
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// A session that says the words in several messages comes before one
// whose single best message scores a little higher; each session's best
// hit comes first, its others after the best hits of the sessions that
// score at least as much, and before those of the sessions that score
// less (a session's one match of a common word); a hit of the period a
// query names weighs more.
func TestBySession(t *testing.T) {
	june := time.Date(2023, 6, 3, 0, 0, 0, 0, time.UTC)
	h := func(s, id string, score float64, at time.Time) loom.SearchHit {
		return loom.SearchHit{SessionID: s, MessageID: id, Score: score, CreatedAt: at}
	}
	hits := []loom.SearchHit{
		h("one", "o1", 10, june), h("spread", "s1", 9, june), h("spread", "s2", 5, june), h("spread", "s3", 4, june), h("other", "x1", 3, june),
	}
	var ids []string
	for _, x := range bySession(slices.Clone(hits), nil, nil) {
		ids = append(ids, x.MessageID)
	}
	if want := []string{"s1", "o1", "s2", "s3", "x1"}; !slices.Equal(ids, want) {
		t.Errorf("by session %v, want %v", ids, want)
	}
	later := hits[len(hits)-1]
	later.CreatedAt = june.AddDate(0, 1, 0)
	named, _ := namedPeriod("in July 2023")
	got := bySession([]loom.SearchHit{h("a", "a1", 5, june), later}, named, nil)
	if got[0].MessageID != "x1" {
		t.Errorf("in the named period first: %+v", got)
	}
}

// A message keeps the share of its score that it holds of the query's
// terms that count: all of it for every term or a query of one; a stop
// word alone does not count.
func TestCoordinated(t *testing.T) {
	for _, c := range []struct {
		held, terms int
		want        float64
	}{{4, 6, 4}, {6, 6, 6}, {1, 6, 1}, {0, 6, 1}, {1, 1, 6}} {
		if got := Coordinated(6, c.held, c.terms); got != c.want {
			t.Errorf("Coordinated(6, %d, %d) = %v, want %v", c.held, c.terms, got, c.want)
		}
	}
	word := func(w string) loom.Term { return loom.Term{Words: []string{w}} }
	if Counted(word("The")) || !Counted(word("backup")) || !Counted(loom.Term{Words: []string{"the", "end"}, Phrase: true}) ||
		!Counted(loom.Term{Alts: []loom.Term{word("go"), word("went")}}) {
		t.Error("Counted: a stop word alone does not count, every other term does")
	}
}
