package loom

import (
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
}

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
}

// Term is one element of a parsed query: a word, or a phrase of words that
// must appear together in order.
type Term struct {
	Words  []string
	Phrase bool
}

// ParseQuery turns what a user typed into terms every one of which must
// match. Quoted parts are phrases; everything else is split into words.
// Punctuation and operator words (AND, OR, NEAR, *, -) are only text: a
// word is a run of letters and digits, the rest separates words. A lone
// quote is ignored. The result never makes an engine's parser fail.
func ParseQuery(q string) []Term {
	var terms []Term
	chunks := strings.Split(q, `"`)
	for i, chunk := range chunks {
		words := Words(chunk)
		if len(words) == 0 {
			continue
		}
		// Odd chunks sit between quotes, unless the last quote is unmatched.
		if i%2 == 1 && i < len(chunks)-1 && len(words) > 1 {
			terms = append(terms, Term{Words: words, Phrase: true})
			continue
		}
		for _, w := range words {
			terms = append(terms, Term{Words: []string{w}})
		}
	}
	return terms
}

// Words splits s into runs of letters and digits.
func Words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
