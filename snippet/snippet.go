// Package snippet cuts the part of a message around what a search matched
// and marks the matching words. Search engines find and rank messages;
// making their snippets here costs microseconds where the engines' own
// snippet functions cost a millisecond a message for common words.
package snippet

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
)

// Words is the length of a snippet in words.
const Words = 24

// Bounds on the work of one snippet, whatever the length of its text.
// A snippet once looked at every word of its message, and a search that
// returned a 20 MB message took 25 s and 1.3 GB; now a snippet reads at
// most MaxText bytes of a message whatever its length.
const (
	// Scan is how far into a text its first match is looked for. A
	// match beyond it in a very long message is not marked: the snippet
	// is the message's start.
	Scan = 1 << 20
	// Span is the most of a long text a snippet is cut from: the window
	// that starts a little before its first match (or at its start when
	// nothing matches).
	Span = 4 << 10
	// lead is how far before the first match a long text's window starts,
	// so that the snippet can show a few words before it.
	lead = 512
	// MaxText is the most of a text a snippet depends on: an engine need
	// read no more of a message (see Prefix).
	MaxText = Scan + Span
)

// ForQuery is NewMatcher for q's words, with q's gate applied to every
// text before its snippet is cut and marked.
func ForQuery(q loom.SearchQuery) *Matcher {
	m := NewMatcher(q.Text)
	m.gate = q.Gate
	return m
}

// Matcher finds a query's words in text, comparing stems, so that
// "configuring" in a query marks "configured" in a message as the search
// index's stemming tokenizer matched it.
type Matcher struct {
	// gate is applied to the texts snippets are made from, before
	// they are (loom.SearchQuery.Gate).
	gate     func(texts []string, cut []bool)
	stems    []string
	prefixes []string
	// weight is how much each stem's word counts in choosing a snippet's
	// window: its length, long words being the rare ones.
	weight []int
	// quick holds each prefix as the key of asciiKey, to rule out most
	// words without lowering their case or stemming them.
	quick map[uint32]bool
	// maxLen is the longest word that may have one of the stems:
	// stemming removes no more than a few letters.
	maxLen int
}

// NewMatcher prepares the words of a user's query. A query that
// loom.ParseQuery refuses (too long) matches nothing: engines refuse such
// a query before making snippets. Its stop words ("the", "are", "in")
// are not marked, unless it has no other words: every message holds
// them, and a snippet cut around them would leave out the word that
// matched.
func NewMatcher(query string) *Matcher {
	m := &Matcher{quick: map[uint32]bool{}}
	terms, _ := loom.ParseQuery(query)
	content := false
	for _, t := range terms {
		for _, w := range t.Words {
			content = content || !english.IsStopWord(strings.ToLower(w))
		}
	}
	seen := map[string]bool{}
	for _, t := range terms {
		for _, w := range t.Words {
			s := stem(w)
			if s == "" || seen[s] || (content && english.IsStopWord(strings.ToLower(w))) {
				continue
			}
			seen[s] = true
			m.weight = append(m.weight, utf8.RuneCountInString(s))
			p := prefix(s)
			m.stems = append(m.stems, s)
			m.prefixes = append(m.prefixes, p)
			if k, ok := asciiKey(p, len(p)); ok {
				m.quick[k] = true
			}
			m.maxLen = max(m.maxLen, 2*max(len(w), len(s))+24)
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
	if len(w) > m.maxLen || !m.mayMatch(w) {
		return -1
	}
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

// mayMatch reports whether w may start with one of the prefixes once
// lowered: false only when its first letters are ASCII and start none of
// them.
func (m *Matcher) mayMatch(w string) bool {
	for n := 1; n <= 3 && n <= len(w); n++ {
		k, ok := asciiKey(w, n)
		if !ok {
			return true
		}
		if m.quick[k] {
			return true
		}
	}
	// w starts with ASCII letters: a prefix that is not ASCII, or is
	// longer than w, is not one of its.
	return false
}

// asciiKey packs the first n (at most 3) bytes of s, lowered, and n into
// a map key; ok is false when one of them is not ASCII.
func asciiKey(s string, n int) (uint32, bool) {
	k := uint32(n)
	for i := range n {
		c := s[i]
		if c >= utf8.RuneSelf {
			return 0, false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		k = k<<8 | uint32(c)
	}
	return k, true
}

// maxChecks bounds the words first stems in one text: each costs about
// half a microsecond, and a text may hold a million words that start
// like a query word without being it.
const maxChecks = 4096

// first returns the byte offset of the first word of text that matches,
// or -1. It reads text once and allocates nothing for words that cannot
// match; after maxChecks words that start like a query word but are not
// one, it gives up.
func (m *Matcher) first(text string) int {
	if len(m.stems) == 0 {
		return -1
	}
	checks := 0
	found := func(w string) bool {
		if len(w) > m.maxLen || !m.mayMatch(w) {
			return false
		}
		checks++
		return m.match(w) >= 0
	}
	start := -1
	for i := 0; i < len(text); {
		c, size := text[i], 1
		var letter bool
		if c < utf8.RuneSelf {
			letter = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(text[i:])
			letter = isWord(r)
		}
		switch {
		case letter && start < 0:
			start = i
		case !letter && start >= 0:
			if found(text[start:i]) {
				return start
			}
			if checks >= maxChecks {
				return -1
			}
			start = -1
		}
		i += size
	}
	if start >= 0 && found(text[start:]) {
		return start
	}
	return -1
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

type word struct {
	start, end int // byte offsets in the text
	term       int // query word matched, or -1
}

// Make returns about Words words of text around its best run of matches
// near its first match, each match between markStart and markEnd, with
// "…" where text was cut.
func (m *Matcher) Make(text, markStart, markEnd string) string {
	return m.MakeWindow(Window{Text: text}, markStart, markEnd)
}

// Window is the part of a long text that an engine read, instead of all
// of it.
type Window struct {
	Text string
	// Head and Tail say whether the text was cut at its start or at its
	// end: the word at a cut may be partial, and is left out.
	Head, Tail bool
}

// Prefix is the window of a message of which an engine read the start:
// at least MaxText+1 bytes (or characters) of it, or all of it when it
// is shorter. The snippet made from it is the one the whole message
// gives.
func Prefix(text string) Window {
	if len(text) <= MaxText {
		return Window{Text: text}
	}
	return Window{Text: text[:runeStart(text, MaxText)], Tail: true}
}

// MakeWindow is Make for a window of a longer text: the snippet is made
// from the window, with "…" at its cuts.
func (m *Matcher) MakeWindow(w Window, markStart, markEnd string) string {
	return m.MakeWindows([]Window{w}, markStart, markEnd)[0]
}

// MakeWindows makes the snippets of the hits of one search from their
// windows, in order: the gate, when the search has one, sees all their
// texts at once before any snippet is made.
func (m *Matcher) MakeWindows(ws []Window, markStart, markEnd string) []string {
	if m.gate != nil && len(ws) > 0 {
		texts, cut := make([]string, len(ws)), make([]bool, len(ws))
		for i, w := range ws {
			texts[i], cut[i] = w.Text, w.Tail
		}
		m.gate(texts, cut)
		ws = slices.Clone(ws)
		for i := range ws {
			ws[i].Text = texts[i]
		}
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = m.makeWindow(w, markStart, markEnd)
	}
	return out
}

// makeWindow is MakeWindow of a window already gated.
func (m *Matcher) makeWindow(w Window, markStart, markEnd string) string {
	text, head, tail := w.Text, w.Head, w.Tail
	if len(text) > Span {
		from := max(0, m.first(text[:min(len(text), Scan)])-lead)
		to := runeStart(text, min(len(text), from+Span))
		from = runeStart(text, from)
		head, tail = head || from > 0, tail || to < len(text)
		text = text[from:to]
	}
	if head {
		if i := strings.IndexFunc(text, func(r rune) bool { return !isWord(r) }); i >= 0 {
			text = text[i:]
		} else {
			text = ""
		}
	}
	if tail {
		text = text[:strings.LastIndexFunc(text, func(r rune) bool { return !isWord(r) })+1]
	}
	return m.make(readable(text, head, tail), head, tail, markStart, markEnd)
}

// runeStart is i, or the start of the character i falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// make is Make on text that was cut from a longer one before its start
// (head) or after its end (tail).
func (m *Matcher) make(text string, head, tail bool, markStart, markEnd string) string {
	words := m.words(text)
	if len(words) == 0 {
		if head || tail {
			return "…"
		}
		return ""
	}
	from := 0
	if len(words) > Words {
		from = m.window(words)
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

// words are the words of text (runs of letters and digits), each with
// the query word it matches. Words of a redaction's marker
// ([REDACTED:authorization-header]) are the rule's name, not the text:
// they match no query word.
func (m *Matcher) words(text string) []word {
	var words []word
	start := -1
	redacted := -1
	add := func(from, to int) {
		term := -1
		if from >= redacted {
			term = m.match(text[from:to])
		}
		words = append(words, word{from, to, term})
	}
	for i, r := range text {
		letter := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case letter && start < 0:
			start = i
		case !letter && start >= 0:
			add(start, i)
			start = -1
		}
		if r == '[' && strings.HasPrefix(text[i:], loom.RedactedPrefix) {
			if end := strings.IndexByte(text[i:], ']'); end > 0 {
				redacted = i + end + 1
			}
		}
	}
	if start >= 0 {
		add(start, len(text))
	}
	return words
}

// window is the first of the Words words of the snippet, of more than
// Words words: the window with the most distinct query words, the
// longer (the rarer) weighing more, then the most matches; ties go to
// the earliest. It starts a few words before the shortest run of it
// that holds each of its query words, for context, and shows what
// follows that run.
func (m *Matcher) window(words []word) int {
	from := 0
	counts := make([]int, len(m.stems))
	distinct, hits := 0, 0
	count := func(w word, d int) {
		if w.term < 0 {
			return
		}
		if counts[w.term] == 0 {
			distinct += m.weight[w.term]
		}
		counts[w.term] += d
		if counts[w.term] == 0 {
			distinct -= m.weight[w.term]
		}
		hits += d
	}
	for _, w := range words[:Words] {
		count(w, 1)
	}
	best := distinct*1000 + hits
	for i := 1; i+Words <= len(words); i++ {
		count(words[i-1], -1)
		count(words[i+Words-1], 1)
		if score := distinct*1000 + hits; score > best {
			best, from = score, i
		}
	}
	// From a few words before the shortest run of the window's words
	// that holds each of its distinct query words: a window whose
	// repeated matches fill it would end on its last match ("…#
	// Determine port PORT="${SPOTTER_PORT…", the value cut off).
	first, last := shortestCover(words[from:from+Words], len(m.stems))
	lead := min(4, (Words-(last-first+1))/2)
	from = max(0, from+first-lead)
	return min(from, len(words)-Words)
}

// shortestCover is the first and last place of the shortest run of ws
// that holds every query word ws holds (of terms), the earliest of
// equals; 0, 0 when ws holds none.
func shortestCover(ws []word, terms int) (first, last int) {
	counts := make([]int, terms)
	want := 0
	for _, w := range ws {
		if w.term >= 0 {
			if counts[w.term] == 0 {
				want++
			}
			counts[w.term]++
		}
	}
	if want == 0 {
		return 0, 0
	}
	clear(counts)
	held, lo := 0, 0
	first, last = 0, len(ws)-1
	for hi, w := range ws {
		if w.term < 0 {
			continue
		}
		if counts[w.term]++; counts[w.term] == 1 {
			held++
		}
		for held == want {
			if ws[lo].term >= 0 {
				if hi-lo < last-first {
					first, last = lo, hi
				}
				if counts[ws[lo].term]--; counts[ws[lo].term] == 0 {
					held--
				}
			}
			lo++
		}
	}
	return first, last
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
