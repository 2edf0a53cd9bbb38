package postgres

import (
	"slices"
	"strings"
	"testing"
)

// The lexemes of a part's tsquery constant are read back as PostgreSQL
// wrote them, a quote in a lexeme included.
func TestLexemes(t *testing.T) {
	for tsq, want := range map[string][]string{
		`'john'`:                      {"john"},
		`'get' | 'got' | 'gotten'`:    {"get", "got", "gotten"},
		`'it''s' & 'o''neil'`:         {"it's", "o'neil"},
		`'skill':*`:                   {"skill"},
		`'new' <-> 'york'`:            {"new", "york"},
		``:                            nil,
		`'pipe|word' | 'colon:*word'`: {"pipe|word", "colon:*word"},
	} {
		sql := "'" + strings.ReplaceAll(tsq, "'", "''") + "'::tsquery"
		if got := lexemes(sql); !slices.Equal(got, want) {
			t.Errorf("lexemes(%s) = %q, want %q", sql, got, want)
		}
	}
}

func FuzzLexemes(f *testing.F) {
	f.Add("john", "it's")
	f.Fuzz(func(t *testing.T, a, b string) {
		if a == "" || b == "" {
			return
		}
		quote := func(w string) string { return "'" + strings.ReplaceAll(w, "'", "''") + "'" }
		tsq := quote(a) + " | " + quote(b)
		sql := "'" + strings.ReplaceAll(tsq, "'", "''") + "'::tsquery"
		if got := lexemes(sql); !slices.Equal(got, []string{a, b}) {
			t.Errorf("lexemes(%s) = %q, want %q", sql, got, []string{a, b})
		}
	})
}

// The newest matches of a query are found through the index only when
// every part was counted (or its common words' share is known) and
// their sum squared is at most ScanDepth times the store.
func TestFewMatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parts []weighedPart
		total float64
		want  bool
	}{
		{"four rare words at a million", []weighedPart{{n: 300}, {n: 900}, {n: 500}, {n: 363}}, 1e6, true},
		{"a common word's share", []weighedPart{{n: 300}, {n: 120000}}, 1e6, true},
		{"a word in half the store", []weighedPart{{n: 300}, {n: 500000}}, 1e6, false},
		{"a floor only", []weighedPart{{n: 300}, {n: RarityDepth, floor: true}}, 1e6, false},
		{"not counted", []weighedPart{{n: -1}}, 1e6, false},
		{"nothing", nil, 1e6, false},
		{"an empty store", []weighedPart{{n: 0}}, 0, false},
	} {
		if got := fewMatches(tc.parts, tc.total); got != tc.want {
			t.Errorf("%s: fewMatches = %v, want %v", tc.name, got, tc.want)
		}
	}
}
