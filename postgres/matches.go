package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// How a broad query's newest matches are found (searchSQL's pool). Two
// ways, whose costs grow in opposite directions with the number of
// matches m among the N messages of the store:
//
//   - a walk back along bodies' primary key, testing each message, reads
//     about ScanDepth·N/m messages to find ScanDepth matches (the whole
//     table when there are fewer than ScanDepth);
//   - the search column's index finds all m, which are then sorted by
//     id: it reads m messages.
//
// The planner chooses from its statistics, which guess a rare word of a
// million messages to be in thousands (every word outside the most
// common ones is given half the rarest one's share), and from a LIMIT
// above it that it takes to end the walk early: a query of four rare
// words with 2,063 matches at a million messages walked the whole table
// (2.8 s) where the index took 5 ms. The counts that weigh an any-word
// query's terms (rarity) say how many matches there are, up to
// RarityDepth a term; beyond it, the statistics' share of each common
// word does. The index is taken when m·m ≤ ScanDepth·N, where the two
// ways read as many messages (141,000 matches at a million messages).

// fewMatches reports whether the matches of an any-word query of parts,
// in a store of total messages, are few enough that its newest are best
// found through the search index (see above): at most the sum of its
// parts' messages. A part that was not counted, or whose number is a
// floor only (weighedPart), leaves the choice to the planner.
func fewMatches(parts []weighedPart, total float64) bool {
	if len(parts) == 0 || total <= 0 {
		return false
	}
	var m float64
	for _, p := range parts {
		if p.n < 0 || p.floor {
			return false
		}
		m += float64(p.n)
	}
	return m*m <= ScanDepth*total
}

// commonParts sets how many messages hold each of parts counted to
// RarityDepth (a count stops there): the share of messages that the
// search column's statistics give its words (pg_stats'
// most_common_elems), times total, at least RarityDepth. When they do
// not hold one of its words, or it is a prefix (whose words are not
// lexemes), that number is a floor only. Weighed as RarityDepth, a word in half of a
// million messages weighed half as much as one in a hundred.
func (s *Store) commonParts(ctx context.Context, parts []weighedPart, total float64) error {
	var common []int
	for i, p := range parts {
		if p.n >= RarityDepth {
			common = append(common, i)
		}
	}
	if len(common) == 0 {
		return nil
	}
	var words []string
	for _, i := range common {
		words = append(words, lexemes(parts[i].tsq)...)
	}
	shares, err := s.commonShares(ctx, words)
	if err != nil {
		return err
	}
	for _, i := range common {
		p := &parts[i]
		if strings.Contains(p.tsq, ":*") {
			p.floor = true
			continue
		}
		// A phrase is in no more messages than its rarest word;
		// alternatives in as many as all of theirs.
		phrase := strings.Contains(p.tsq, "<") || strings.Contains(p.tsq, "&")
		share := 0.0
		for i, l := range lexemes(p.tsq) {
			f, found := shares[l]
			switch {
			case !phrase:
				share += f
			case i == 0 || f < share:
				share = f
			}
			// A word the statistics leave out is rarer than those they
			// hold, by how much they do not say.
			p.floor = p.floor || !found
		}
		p.n = max(p.n, int64(min(share, 1)*total))
	}
	return nil
}

// commonShares returns the share of messages that hold each of words
// that the search column's statistics count among its most common
// (pg_stats.most_common_elems); a word they do not hold is left out.
func (s *Store) commonShares(ctx context.Context, words []string) (map[string]float64, error) {
	rows, err := s.pool.Query(ctx, `SELECT e.w, e.f FROM pg_stats p,
			unnest(p.most_common_elems::text::text[], p.most_common_elem_freqs) AS e(w, f)
		WHERE p.schemaname = current_schema() AND p.tablename = 'bodies' AND p.attname = 'search'
			AND e.w = ANY($1::text[]) AND e.f IS NOT NULL`, words)
	if err != nil {
		return nil, fmt.Errorf("search: the search column's statistics: %w", err)
	}
	out := map[string]float64{}
	var w string
	var f float32
	if _, err := pgx.ForEachRow(rows, []any{&w, &f}, func() error {
		out[w] = float64(f)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("search: the search column's statistics: %w", err)
	}
	return out, nil
}

// lexemeRE is a quoted lexeme of a tsquery's text, a quote inside it
// doubled.
var lexemeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`'((?:[^']|'')*)'`) })

// lexemes returns the lexemes of tsq, the SQL of a tsquery constant
// (weighedPart.tsq: its text quoted once more as a string).
func lexemes(tsq string) []string {
	text := strings.TrimSuffix(strings.TrimPrefix(tsq, "'"), "'::tsquery")
	text = strings.ReplaceAll(text, "''", "'")
	var out []string
	for _, m := range lexemeRE().FindAllStringSubmatch(text, -1) {
		out = append(out, strings.ReplaceAll(m[1], "''", "'"))
	}
	return out
}
