package loom

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// SearchQuery is a full-text search over a user's messages.
type SearchQuery struct {
	Text string
	// Raw passes Text to the engine's own query syntax unchanged.
	Raw       bool
	UserID    string
	SessionID string
	ProjectID string
	Surface   string
	Role      string
	Since     time.Time
	Until     time.Time
	Limit     int
	// Archived searches archived sessions too (they are left out by
	// default).
	Archived bool
	// MarkStart and MarkEnd surround each match in the snippet;
	// DefaultMarkStart and DefaultMarkEnd when empty.
	MarkStart string
	MarkEnd   string
	// Newest returns the newest matches, scored by recency, without
	// ranking them, and marks them Partial: what a caller that must
	// answer within a bound however large the store asks for (recall
	// over a large index). A search never falls back to it on its own.
	Newest bool
	// Deadline, when set, is when the search's tiers after the first
	// must end (a hook that answers within a budget): they stop then, as
	// when they run out of MaxSearchTime, and the hits found before are
	// returned, marked Partial. The first tier, which finds nothing when
	// cut short, runs within MaxSearchTime and the context.
	Deadline time.Time `json:"-"`
	// AnyWord matches messages that hold any of the query's terms
	// instead of every one, ranked by the engine (a message with more of
	// them first, and with rarer ones where the engine weighs rarity):
	// what a search of several terms that no message holds all of falls
	// back to (Exact turns that off). Its hits are marked TierAnyWord.
	AnyWord bool
	// Exact keeps a search to messages that hold every term: no
	// fallback to the other tiers.
	Exact bool
	// Titles matches the titles of sessions instead of messages: a hit
	// is the first prompt of a session whose title holds the query's
	// words (or their stems), those holding more of them first (the
	// TierTitle tier).
	Titles bool
	// Keep, when set, is applied by the engine to its hits, ranked,
	// before it makes their snippets: the hits returned are those Keep
	// returns, in its order. The tiers that rank sessions choose their
	// page of many hits so, without making the snippets of the rest.
	Keep func(hits []SearchHit) []SearchHit `json:"-"`
	// Gate, when set, is applied to the texts the snippets of a search
	// are made from (messages', titles'), all of them at once, before
	// any is cut and its matches marked: how the ways out of the
	// machine (MCP, recall, hooks) redact secrets while they are whole,
	// before a highlight or a cut could break them apart, and a secret
	// found in one text where it is repeated in another (secrets.Gate).
	// It replaces each texts[i] by its redacted form; cut[i] says the
	// text was cut short at its end.
	Gate func(texts []string, cut []bool) `json:"-"`
}

// The tiers of a search, in the order a plain query goes through them
// while it has found fewer hits than its limit; SearchHit.Tier names the
// one that found a hit. A hit of the first tier, every term as typed
// (porter-stemmed by the engine), has an empty Tier.
const (
	// TierWordForms: every word that is not a stop word, as typed or,
	// when stemming shortens it, as any word starting with its stem
	// ("configuration" finds "configurable"); stop words are not
	// required.
	TierWordForms = "word_forms"
	// TierTitle: sessions whose title holds the query's words.
	TierTitle = "title"
	// TierAnyWord: messages that hold some of the words (or their word
	// forms), ranked by the engine with rarer words weighing more
	// (SearchQuery.AnyWord).
	TierAnyWord = "any_word"
	// TierFuzzy: words that start with a rare word of the query, or are
	// one edit (a letter added, dropped, changed or two swapped) from it.
	TierFuzzy = "fuzzy"
)

// Default snippet markers: Markdown bold, readable on a terminal.
const (
	DefaultMarkStart = "**"
	DefaultMarkEnd   = "**"
)

// Marks returns the markers that surround matches in q's snippets: q's
// own, or the defaults when it sets neither.
func (q SearchQuery) Marks() (start, end string) {
	if q.MarkStart == "" && q.MarkEnd == "" {
		return DefaultMarkStart, DefaultMarkEnd
	}
	return q.MarkStart, q.MarkEnd
}

// SearchHit is one matching message, best first by Score (higher is
// better).
type SearchHit struct {
	SessionID string    `json:"session_id"`
	MessageID string    `json:"message_id"`
	Seq       int64     `json:"seq"`
	Role      string    `json:"role"`
	Score     float64   `json:"score"`
	Snippet   string    `json:"snippet"`
	CreatedAt time.Time `json:"created_at"`
	// Session is filled for display: the title and key of the hit's
	// session.
	SessionTitle string `json:"session_title,omitempty"`
	SessionKey   string `json:"session_key,omitempty"`
	// AlsoIn names the other sessions in which the same message matched:
	// forks and rewinds that inherited it. The message is one hit.
	AlsoIn []string `json:"also_in,omitempty"`
	// Partial is set on every hit of a search that ran out of time
	// before every tier it needed had run: the hits are the best that
	// the tiers which ended in time found, in their order, but not all
	// there are; of a search that ranked only the newest of its matches
	// (a query whose words are all in more messages than an engine
	// ranks at once); and of a search that asked for the newest
	// matches, SearchQuery.Newest.
	Partial bool `json:"partial,omitempty"`
	// Tier is "" for a hit that holds every term of the query, else the
	// tier that found it (TierWordForms, TierTitle, TierAnyWord,
	// TierFuzzy) after the ones before it found fewer hits than the
	// search's limit.
	Tier string `json:"tier,omitempty"`
}

// MessageKey names the message h is of: its id, its place and its time,
// which every session that holds it from another (a fork, a rewind)
// holds it with, even where that session changed it since (a tool's
// result that came later). Messages that only share an id (line 2 of
// two files that name their lines by number) are two messages. A search
// keeps one hit per key.
func (h SearchHit) MessageKey() string {
	return h.MessageID + "\x00" + strconv.FormatInt(h.Seq, 10) + "\x00" + strconv.FormatInt(h.CreatedAt.UnixNano(), 10)
}

// Partial reports whether hits are those of a search that ranked only
// part of its matches (SearchHit.Partial): the best of those, not all.
func Partial(hits []SearchHit) bool {
	return len(hits) > 0 && hits[0].Partial
}

// Term is one element of a parsed query: a word, or a phrase of words that
// must appear together in order. The tiers of a search rewrite terms:
// with Prefix, Words[0] matches any word that starts with it; with Alts,
// the term matches where any of its alternatives does (Words and Phrase
// are then unused).
type Term struct {
	Words  []string
	Phrase bool
	Prefix bool
	Alts   []Term
}

// Limits on a search query. Every word of a query costs something in
// every message that matches it (ranking reads each word's positions in
// each matching message, and a repeated word is read once per repeat), so
// without them the cost of a search grows with what is typed or pasted:
// a query of a few thousand words took minutes and gigabytes. An exact
// or raw query over a limit is refused, never cut short: a search that
// silently ignored part of its query would find what was not asked for.
// A plain one is not refused: its first words go through the tiers that
// need not every word, whose hits say their tier (see TierTitle).
const (
	// MaxQueryBytes is the longest query text, in bytes.
	MaxQueryBytes = 1024
	// MaxQueryWords is the most words a query may hold once repeated
	// words and phrases are dropped; each word of a phrase counts. A raw
	// query, which loom does not rewrite, counts every word it holds,
	// repeats and operator words included.
	MaxQueryWords = 32
)

// ParseQuery turns what a user typed into the distinct terms every one of
// which must match (in a search's first tier). Quoted parts are phrases; everything else is split
// into words. Punctuation and operator words (AND, OR, NEAR, *, -) are
// only text: a word is a run of letters and digits, the rest separates
// words. A lone quote is ignored. A word or phrase given twice (ignoring
// case) is kept once. The result never makes an engine's parser fail. A
// query longer than MaxQueryBytes, or with more than MaxQueryWords
// distinct words, is refused with an EINVALID error.
func ParseQuery(q string) ([]Term, error) {
	if len(q) > MaxQueryBytes {
		return nil, tooLong(len(q))
	}
	var terms []Term
	seen := map[string]bool{}
	words := 0
	add := func(t Term) {
		key := strings.ToLower(strings.Join(t.Words, " "))
		if t.Phrase {
			key = `"` + key
		}
		if seen[key] {
			return
		}
		seen[key] = true
		terms = append(terms, t)
		words += len(t.Words)
	}
	chunks := strings.Split(q, `"`)
	for i, chunk := range chunks {
		ws := Words(chunk)
		if len(ws) == 0 {
			continue
		}
		// Odd chunks sit between quotes, unless the last quote is unmatched.
		if i%2 == 1 && i < len(chunks)-1 && len(ws) > 1 {
			add(Term{Words: ws, Phrase: true})
			continue
		}
		for _, w := range ws {
			add(Term{Words: []string{w}})
		}
	}
	if words > MaxQueryWords {
		return nil, tooManyWords(words, "different ")
	}
	return terms, nil
}

// Terms checks q's text against the limits on a query and returns its
// terms: for a raw query none, since the engine reads its text in its own
// syntax, and every word of that text counts against MaxQueryWords.
func (q SearchQuery) Terms() ([]Term, error) {
	if !q.Raw {
		return ParseQuery(q.Text)
	}
	if len(q.Text) > MaxQueryBytes {
		return nil, tooLong(len(q.Text))
	}
	if n := len(Words(q.Text)); n > MaxQueryWords {
		return nil, tooManyWords(n, "")
	}
	return nil, nil
}

// MaxSearchTime bounds how long the tiers after a search's first rank
// their matches. However few its words, a query can be slow: words found
// in most messages that rarely appear together (or in the phrases it
// asks for) make an engine read most of its index to find the few
// messages that hold them all, which on a store of a million messages
// takes seconds; and on a busy machine any query can be slow. The tiers
// after the first (every word) share MaxSearchTime: a search out of time
// returns the hits of the tiers that ended in time, marked Partial, so
// that no search puts other messages in the place of hits.
const MaxSearchTime = 800 * time.Millisecond

// MaxRankTime bounds the first tier of a search (every word), the
// answer itself: a busy machine makes it slower, not wrong, so it may
// take up to MaxRankTime before the search is refused, so that every
// search returns within bounded time and no query holds a server's CPU.
const MaxRankTime = 8 * time.Second

// ErrSearchTime is in the chain of the error of a search refused for
// running out of MaxRankTime before it had ranked any hit,
// beside its EINVALID *Error: unlike the other refusals, the same query
// may pass on a less busy machine.
var ErrSearchTime = errors.New("search ran out of time")

func tooLong(n int) *Error {
	return Errorf(EINVALID, "search query too long: %d bytes, at most %d", n, MaxQueryBytes)
}

func tooManyWords(n int, kind string) *Error {
	return Errorf(EINVALID, "search query has too many words: %d %swords, at most %d", n, kind, MaxQueryWords)
}

// Words splits s into runs of letters and digits.
func Words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// IndexSizer is a Store that tells cheaply, without reading its
// full-text index, how many messages that index holds at most. What a
// ranked search of common words costs grows with it (SQLite's bm25
// counts the messages holding each word on every query): recall, which
// must answer an agent's hook in 100 ms, ranks a large index's matches
// another way.
type IndexSizer interface {
	IndexSize(ctx context.Context) (int64, error)
}

// RedactedPrefix starts the marker that replaces a secret in stored
// text ([REDACTED:rule], package secrets): a snippet marks no query word
// inside one.
const RedactedPrefix = "[REDACTED:"
