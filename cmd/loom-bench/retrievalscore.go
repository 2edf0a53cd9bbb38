package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// retrievalScore adds up the questions of a category.
type retrievalScore struct {
	n, hit1, hit5, hit10 int
	mrr, ev5, ev10       float64
	times                []time.Duration
}

// add counts a question whose first evidence session is at rank (0:
// not found), of those ranked.
func (s *retrievalScore) add(rank int, ranked, gold []string, took time.Duration) {
	s.n++
	if rank > 0 {
		s.mrr += 1 / float64(rank)
	}
	if rank == 1 {
		s.hit1++
	}
	if rank >= 1 && rank <= 5 {
		s.hit5++
	}
	if rank >= 1 && rank <= 10 {
		s.hit10++
	}
	found := func(k int) float64 {
		n := 0
		for _, g := range gold {
			if slices.Contains(ranked[:min(k, len(ranked))], g) {
				n++
			}
		}
		return float64(n) / float64(len(gold))
	}
	s.ev5 += found(5)
	s.ev10 += found(10)
	s.times = append(s.times, took)
}

func (s *retrievalScore) row(b *strings.Builder, name string) {
	p := func(k int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(s.n)) }
	f := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x/float64(s.n)) }
	fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %.3f | %s | %s | %.2f ms |\n", name, s.n, p(s.hit1), p(s.hit5), p(s.hit10),
		s.mrr/float64(s.n), f(s.ev5), f(s.ev10), ms(pct(s.times, 0.5)))
}

// rankedSessions are the dataset's ids of the distinct sessions of hits,
// in their order; a session of no dataset (the scale run's filler) by
// loom's id.
func rankedSessions(hits []loom.SearchHit, keys map[string]string) []string {
	var ranked []string
	for _, h := range hits {
		id := keys[h.SessionID]
		if id == "" {
			id = h.SessionID
		}
		if !slices.Contains(ranked, id) {
			ranked = append(ranked, id)
		}
	}
	return ranked
}

// goldRank is the rank (from 1) of the first of ranked in gold; 0 when
// none is.
func goldRank(ranked, gold []string) int {
	for i, id := range ranked {
		if slices.Contains(gold, id) {
			return i + 1
		}
	}
	return 0
}

// scoreTable writes the table of scores by category and over all.
func scoreTable(b *strings.Builder, set *retrievalSet, byCat map[string]*retrievalScore, total *retrievalScore) {
	fmt.Fprintln(b, "| category | n | hit@1 | hit@5 | hit@10 | MRR | evidence recall@5 | evidence recall@10 | median query |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|---|---|")
	for _, c := range set.cats {
		if s := byCat[c]; s != nil {
			s.row(b, set.names[c])
		}
	}
	total.row(b, "**all**")
}

// jsonLines creates path for one JSON value a line; with no path it
// returns a nil encoder. done closes the file.
func jsonLines(path string) (enc *json.Encoder, done func(), err error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	return json.NewEncoder(f), func() { f.Close() }, nil
}
