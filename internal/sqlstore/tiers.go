package sqlstore

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
)

// A tier is one way of matching a plain query that a search tries after
// the ones before it found fewer hits than its limit (see loom.TierWordForms
// and the tiers after it).
type tier struct {
	name  string
	terms []loom.Term
	// anyWord matches any of terms instead of every one; titles matches
	// session titles instead of messages.
	anyWord, titles bool
	// sessions ranks the tier's hits by session (bySession).
	sessions bool
}

// Bounds on the tiers. A word shorter than minStem letters is matched
// as typed only: a prefix of two or three letters covers much of an
// index (the engines read every word it starts). At most maxFuzzy rare
// words, each of at most maxFuzzyLen letters, get typo variants: a word
// of n letters has at most 3n of them (Edits).
const (
	minStem     = 4
	maxFuzzy    = 3
	maxFuzzyLen = 24
	// maxTierWords is how many content words of a query over the limits
	// of loom.ParseQuery the tiers after the first use.
	maxTierWords = loom.MaxQueryWords
)

// tiers returns the tiers a plain query of terms goes through after the
// every-word match, in order; full is false for a query cut down to its
// first content words (over the limits of loom.ParseQuery), which skips
// the tiers that need every word.
func tiers(terms []loom.Term, full bool) []tier {
	words := contentWords(terms)
	var phrases []loom.Term
	for _, t := range terms {
		if t.Phrase {
			phrases = append(phrases, t)
		}
	}
	var out []tier
	forms := append(slices.Clone(phrases), formTerms(words)...)
	if full && len(forms) > 0 && !sameTerms(forms, terms) {
		out = append(out, tier{name: loom.TierWordForms, terms: forms, sessions: true})
	}
	if len(words) > 0 {
		out = append(out, tier{name: loom.TierTitle, terms: wordTerms(words), titles: true})
	}
	if len(forms) > 1 {
		out = append(out, tier{name: loom.TierAnyWord, terms: append(slices.Clone(phrases), irregularTerms(words)...), anyWord: true, sessions: true})
	}
	if fuzzy := fuzzyTerms(words); len(fuzzy) > 0 {
		out = append(out, tier{name: loom.TierFuzzy, terms: fuzzy, anyWord: true})
	}
	return out
}

// contentWords are the distinct words of terms outside phrases, in lower
// case, without English stop words ("the", "which", "are"): every
// message holds some, so they neither tell messages apart nor may be
// required of them (and PostgreSQL drops them from every query).
func contentWords(terms []loom.Term) []string {
	var content []string
	seen := map[string]bool{}
	for _, t := range terms {
		if t.Phrase || len(t.Alts) > 0 {
			continue
		}
		for _, w := range t.Words {
			w = strings.ToLower(w)
			if seen[w] {
				continue
			}
			seen[w] = true
			if !english.IsStopWord(w) {
				content = append(content, w)
			}
		}
	}
	return content
}

// Stem is the English (Porter2) stem of a lower-case word.
func Stem(w string) string { return english.Stem(w, false) }

// formTerms matches each word as typed or as any word that starts with
// its stem, when stemming took something off the word and both word and
// stem have at least minStem letters. A word that is its own stem
// ("time", "replica") is matched as typed: the engine's stemmer already
// finds its inflections, and its prefix would add other words
// ("timeout") at the cost of reading every one of their matches. A form
// of an irregular verb also matches its other forms ("go" finds "went"
// and "gone"), which no stemmer folds together.
func formTerms(words []string) []loom.Term { return altTerms(words, true) }

// wordTerms is one term per word.
func wordTerms(words []string) []loom.Term {
	out := make([]loom.Term, len(words))
	for i, w := range words {
		out[i] = loom.Term{Words: []string{w}}
	}
	return out
}

// sameTerms reports whether a and b match the same: the forms tier of a
// query whose words are all short and none a stop word is its first
// tier again.
func sameTerms(a, b []loom.Term) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i].Alts) > 0 || len(b[i].Alts) > 0 || a[i].Phrase != b[i].Phrase || a[i].Prefix != b[i].Prefix ||
			!slices.Equal(a[i].Words, b[i].Words) {
			return false
		}
	}
	return true
}

// fuzzyTerms matches the rarest-looking words of a query (its longest:
// long words are the rare ones, and the ones mistyped) by prefix and by
// every word one edit away. The engine keeps the variants its index
// holds; most hold none.
func fuzzyTerms(words []string) []loom.Term {
	var rare []string
	for _, w := range words {
		if n := utf8.RuneCountInString(w); n >= minStem && n <= maxFuzzyLen {
			rare = append(rare, w)
		}
	}
	slices.SortStableFunc(rare, func(a, b string) int { return utf8.RuneCountInString(b) - utf8.RuneCountInString(a) })
	rare = rare[:min(len(rare), maxFuzzy)]
	out := make([]loom.Term, 0, len(rare))
	for _, w := range rare {
		alts := []loom.Term{{Words: []string{w}, Prefix: true}}
		for _, v := range Edits(w) {
			alts = append(alts, loom.Term{Words: []string{v}})
		}
		out = append(out, loom.Term{Alts: alts})
	}
	return out
}

// Edits returns the distinct words one edit from w that the fuzzy tier
// looks up: a letter dropped, two neighbours swapped (the typos of a
// fast typist), or a letter changed for the one another spelling puts
// there (soundAlike: dialyser for dialyzer, licence for license), w
// itself left out, each at least minStem-1 letters; at most 3 a letter
// of w. Any letter changed or added is not: its 26 choices at every
// place made a query of hundreds of words, which the engines took a
// quarter of a second to look up even in a small store.
func Edits(w string) []string {
	rs := []rune(w)
	seen := map[string]bool{w: true}
	var out []string
	add := func(v []rune) {
		if len(v) < minStem-1 {
			return
		}
		s := string(v)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for i := range rs {
		add(slices.Concat(rs[:i], rs[i+1:]))
		if i+1 < len(rs) {
			v := slices.Clone(rs)
			v[i], v[i+1] = v[i+1], v[i]
			add(v)
		}
		for _, r := range soundAlike[rs[i]] {
			v := slices.Clone(rs)
			v[i] = r
			add(v)
		}
	}
	return out
}

// soundAlike are the letters that spellings of one word swap for each
// other: British and American (analyse, analyze; licence, license), and
// the sounds of c and k (disk, disc).
var soundAlike = map[rune][]rune{
	's': {'z', 'c'}, 'z': {'s'},
	'c': {'s', 'k'}, 'k': {'c'},
}

// cutQuery returns the terms of a plain query over the limits of
// loom.ParseQuery: its first maxTierWords distinct content words, read
// from its first bytes only.
func cutQuery(text string) []loom.Term {
	const read = 64 << 10
	if len(text) > read {
		text = text[:read]
	}
	var terms []loom.Term
	for _, w := range loom.Words(text) {
		terms = append(terms, loom.Term{Words: []string{w}})
	}
	words := contentWords(terms)
	return wordTerms(words[:min(len(words), maxTierWords)])
}

// irregularTerms is one term per word, with the other forms of an
// irregular verb as its alternatives.
func irregularTerms(words []string) []loom.Term { return altTerms(words, false) }

// altTerms is one term per word, with its other forms as alternatives:
// with stems, its stem as a prefix (as formTerms says when), and the
// other forms of an irregular verb.
func altTerms(words []string, stems bool) []loom.Term {
	out := make([]loom.Term, 0, len(words))
	for _, w := range words {
		alts := []loom.Term{{Words: []string{w}}}
		if stems {
			if s := Stem(w); s != w && utf8.RuneCountInString(w) >= minStem && utf8.RuneCountInString(s) >= minStem {
				alts = append(alts, loom.Term{Words: []string{s}, Prefix: true})
			}
		}
		for _, f := range IrregularForms(w) {
			alts = append(alts, loom.Term{Words: []string{f}})
		}
		if len(alts) == 1 {
			out = append(out, alts[0])
		} else {
			out = append(out, loom.Term{Alts: alts})
		}
	}
	return out
}
