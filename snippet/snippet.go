// Package snippet cuts the part of a message around what a search matched
// and marks the matching words. Search engines find and rank messages;
// making their snippets here costs microseconds where the engines' own
// snippet functions cost a millisecond a message for common words.
package snippet

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
)

// Words is the length of a snippet in words.
const Words = 24

// Matcher finds a query's words in text, comparing stems, so that
// "configuring" in a query marks "configured" in a message as the search
// index's stemming tokenizer matched it.
type Matcher struct {
	stems    []string
	prefixes []string
}

// NewMatcher prepares the words of a user's query. A query that
// loom.ParseQuery refuses (too long) matches nothing: engines refuse such
// a query before making snippets.
func NewMatcher(query string) *Matcher {
	m := &Matcher{}
	seen := map[string]bool{}
	terms, _ := loom.ParseQuery(query)
	for _, t := range terms {
		for _, w := range t.Words {
			s := stem(w)
			if s == "" || seen[s] {
				continue
			}
			seen[s] = true
			m.stems = append(m.stems, s)
			m.prefixes = append(m.prefixes, prefix(s))
		}
	}
	return m
}

func stem(w string) string {
	w = strings.ToLower(w)
	if !isASCII(w) {
		return w
	}
	return english.Stem(w, false)
}

// prefix is the start every word with that stem has: the stem itself,
// up to three letters (stemming only changes endings).
func prefix(stem string) string {
	if len(stem) > 3 {
		return stem[:3]
	}
	return stem
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// match returns the index of the query word w matches, or -1.
func (m *Matcher) match(w string) int {
	lw := strings.ToLower(w)
	for i, p := range m.prefixes {
		if !strings.HasPrefix(lw, p) {
			continue
		}
		if stem(lw) == m.stems[i] || lw == m.stems[i] {
			return i
		}
	}
	return -1
}

type word struct {
	start, end int // byte offsets in the text
	term       int // query word matched, or -1
}

// Make returns about Words words of text around its best run of matches,
// each match between markStart and markEnd, with "…" where text was cut.
func (m *Matcher) Make(text, markStart, markEnd string) string {
	return m.make(text, false, false, markStart, markEnd)
}

// Window is the part of a long text that an engine read around where a
// search matched, instead of all of it.
type Window struct {
	Text string
	// Head and Tail say whether the text was cut at its start or at its
	// end: the word at a cut may be partial, and is left out.
	Head, Tail bool
}

// MakeWindow is Make for a window of a longer text: the snippet is made
// from the window, with "…" at its cuts.
func (m *Matcher) MakeWindow(w Window, markStart, markEnd string) string {
	text := w.Text
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	if w.Head {
		if i := strings.IndexFunc(text, func(r rune) bool { return !isWord(r) }); i >= 0 {
			text = text[i:]
		} else {
			text = ""
		}
	}
	if w.Tail {
		text = text[:strings.LastIndexFunc(text, func(r rune) bool { return !isWord(r) })+1]
	}
	return m.make(text, w.Head, w.Tail, markStart, markEnd)
}

// make is Make on text that was cut from a longer one before its start
// (head) or after its end (tail).
func (m *Matcher) make(text string, head, tail bool, markStart, markEnd string) string {
	var words []word
	start := -1
	for i, r := range text {
		letter := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case letter && start < 0:
			start = i
		case !letter && start >= 0:
			words = append(words, word{start, i, m.match(text[start:i])})
			start = -1
		}
	}
	if start >= 0 {
		words = append(words, word{start, len(text), m.match(text[start:])})
	}
	if len(words) == 0 {
		if head || tail {
			return "…"
		}
		return ""
	}
	// The window with the most distinct query words, then the most
	// matches; ties go to the earliest.
	from := 0
	if len(words) > Words {
		best := -1
		for i := 0; i+Words <= len(words); i++ {
			distinct, hits := map[int]bool{}, 0
			for _, w := range words[i : i+Words] {
				if w.term >= 0 {
					distinct[w.term] = true
					hits++
				}
			}
			if score := len(distinct)*1000 + hits; score > best {
				best, from = score, i
			}
		}
		// Start a few words before the first match, for context.
		if first := firstMatch(words[from : from+Words]); first > 4 {
			from += first - 4
		}
		from = min(from, len(words)-Words)
	}
	to := min(from+Words, len(words))
	var b strings.Builder
	pos := words[from].start
	if from > 0 || head {
		b.WriteString("…")
	} else {
		// From the start of the text, what comes before the first word
		// (a bracket, a quote) is shown too, as what follows the last
		// one is.
		pos = 0
	}
	for _, w := range words[from:to] {
		b.WriteString(oneLine(text[pos:w.start]))
		if w.term >= 0 {
			b.WriteString(markStart + text[w.start:w.end] + markEnd)
		} else {
			b.WriteString(text[w.start:w.end])
		}
		pos = w.end
	}
	if to < len(words) || tail {
		b.WriteString("…")
	} else {
		b.WriteString(oneLine(text[pos:]))
	}
	return strings.TrimSpace(b.String())
}

func firstMatch(ws []word) int {
	for i, w := range ws {
		if w.term >= 0 {
			return i
		}
	}
	return 0
}

// oneLine turns each run of white space that holds a line break or tab
// into one space.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}
