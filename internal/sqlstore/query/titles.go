package query

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/snippet"
)

// TitleSQL returns the statement of a search of session titles
// (loom.SearchQuery.Titles) in d's dialect, and its arguments: its rows
// are the first prompt (else the first message) of sessions that pass
// q's filters and whose title or description (where a summary is kept)
// holds, as a part of a word, the stems of two words of terms (one, of a
// query of one word), those holding more first; TitleHits keeps those
// that hold the words themselves. Its columns are m.session_id, m.id,
// m.seq, m.role, m.created_at, the score, s.title, s.key,
// s.description and the start of the first prompt's text. ok
// is false when terms have no words.
func TitleSQL(d Dialect, q loom.SearchQuery, terms []loom.Term) (sql string, args []any, ok bool) {
	var pats []string
	for _, w := range titleWords(terms) {
		// A stem of three letters or more matches the title's
		// word forms ("configur" in "Configure the pool").
		if s := english.Stem(w, false); utf8.RuneCountInString(s) >= 3 {
			w = s
		}
		pats = append(pats, w)
	}
	if len(pats) == 0 {
		return "", nil, false
	}
	// Some of the sessions found are left out by TitleHits: more are
	// read than the page.
	limit := titleRows * max(q.Limit, 1)
	if q.Limit <= 0 {
		limit = titleRows * 20
	}
	c := New(d)
	// The words are letters and digits only: nothing in them is a LIKE
	// wildcard. The sessions whose title or description holds enough of
	// them are found first, from the sessions alone, best first; only
	// those are joined to their first prompt. Joined first, PostgreSQL
	// walked every session's messages to find the few: 20 ms of a
	// 10,000-session store's search for a rare word. When the query
	// keeps messages by more than their sessions (one session, a role,
	// a time span), every matching session is found, since some may
	// have no such message.
	var score strings.Builder
	if d.WordsIn != "" {
		score.WriteString(c.SQL(d.WordsIn+"(s.title, s.description, ?)", strings.Join(pats, WordsSep)))
	} else {
		score.WriteString("(")
		for i, p := range pats {
			if i > 0 {
				score.WriteString(" + ")
			}
			p = "%" + p + "%"
			score.WriteString(c.SQL("CASE WHEN s.title "+d.like()+" ? OR s.description "+d.like()+" ? THEN 1.0 ELSE 0.0 END", p, p))
		}
		score.WriteString(")")
	}
	// The sessions' conditions come first in the statement, and take
	// their arguments first; the messages' are added after.
	c.SearchSessions(q)
	c.Add("(s.title <> '' OR s.description <> '')")
	sessions := c.String()
	c.conds = nil
	top := ""
	probe := New(d)
	probe.SearchMessages(q)
	if len(probe.conds) == 0 {
		top = fmt.Sprintf(" ORDER BY score DESC, updated_at DESC, id LIMIT %d", limit)
	}
	found := fmt.Sprintf(`SELECT id, score, updated_at FROM (SELECT s.id, s.updated_at, %s AS score FROM sessions s WHERE %s) x
			WHERE score >= %s%s`, score.String(), sessions, c.SQL("?", min(2, len(pats))), top)
	c.SearchMessages(q)
	// Each session found is joined to its first prompt, one look-up a
	// session. On PostgreSQL through a lateral subquery: joined as a
	// table, its seq a subquery of the session found, the planner
	// (which guesses the found sessions are as many as the limit) read
	// every message into a hash instead, 100-300 ms of a title search
	// of a 100,000-message store where the look-ups take 10-30.
	first := "(SELECT coalesce(min(f.seq), 1) FROM session_messages f WHERE f.session_id = t.id AND f.role = 'user')"
	prompt := fmt.Sprintf("%s session_messages m ON m.session_id = s.id AND m.seq = %s", d.Join, first)
	if d.Lateral {
		prompt = fmt.Sprintf("CROSS JOIN LATERAL (SELECT * FROM session_messages m WHERE m.session_id = t.id AND m.seq = %s LIMIT 1) m", first)
	}
	return fmt.Sprintf(`WITH t AS MATERIALIZED (%s)
		SELECT m.session_id, m.id, m.seq, m.role, m.created_at, t.score, s.title, coalesce(s.key, ''), s.description,
			substr(b.content, 1, %d)
		FROM t %s sessions s ON s.id = t.id %s
			%s bodies b ON b.id = m.body_id
		WHERE %s
		ORDER BY 6 DESC, t.updated_at DESC, s.id
		LIMIT %d`, found, promptRead, d.Join, prompt, d.Join, c.String(), limit), c.Args, true
}

// titleRows is how many times a page's sessions a title search reads.
const titleRows = 4

// promptRead is how much of a first prompt a title search reads, in
// characters: enough for the title made of it (loom.TitleFrom).
const promptRead = 4 * loom.MaxTitle

// titleWords are the words of terms a title search matches, in lower
// case: the words of plain terms.
func titleWords(terms []loom.Term) []string {
	var out []string
	for _, t := range terms {
		if t.Phrase || t.Prefix || len(t.Alts) > 0 {
			continue
		}
		for _, w := range t.Words {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

// titleMatches counts the words of words that text holds as whole
// words: a word of fewer than four letters as typed, a longer one as
// typed, by its stem, or as a word starting with its stem ("configur"
// in "configurable"). "go" is not in "going" or "ago".
func titleMatches(words []string, text string) int {
	var stems []string
	var held []string
	for _, t := range loom.Words(strings.ToLower(text)) {
		held = append(held, t)
		stems = append(stems, english.Stem(t, false))
	}
	n := 0
	for _, w := range words {
		s := english.Stem(w, false)
		for i, t := range held {
			long := utf8.RuneCountInString(w) >= 4
			if t == w || (long && (stems[i] == s || (utf8.RuneCountInString(s) >= 4 && strings.HasPrefix(t, s)))) {
				n++
				break
			}
		}
	}
	return n
}

// madeOfPrompt reports whether title is what loom makes of a first
// prompt that has no title of its own (loom.TitleFrom): such a title
// says no more than the prompt, which the other tiers search.
func madeOfPrompt(title, prompt string) bool {
	return title != "" && loom.TitleFrom(prompt) == title
}

// Rows are the rows of a statement, as both engines' drivers return them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// TitleHits reads the hits of a TitleSQL statement for terms; created
// returns where the engine scans a time into, and how to read it after.
// A session's title counts only where it is its own, not the first
// prompt's start that an import or a new session takes for one; its
// title and description must hold, as whole words, two of the words
// (one of a query of one word) and half of them. Those holding more
// come first; the score is the share of the words held. It returns at
// most q.Limit hits.
func TitleHits(rows Rows, q loom.SearchQuery, terms []loom.Term, created func() (dest any, value func() time.Time)) ([]loom.SearchHit, error) {
	start, end := q.Marks()
	m := snippet.ForQuery(q)
	words := titleWords(terms)
	need := max(min(2, len(words)), (len(words)+1)/2)
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	var hits []loom.SearchHit
	for rows.Next() {
		var h loom.SearchHit
		var desc, prompt string
		dest, value := created()
		if err := rows.Scan(&h.SessionID, &h.MessageID, &h.Seq, &h.Role, dest, &h.Score, &h.SessionTitle, &h.SessionKey, &desc, &prompt); err != nil {
			return nil, fmt.Errorf("search titles: %w", err)
		}
		own := h.SessionTitle
		if madeOfPrompt(own, prompt) {
			own = ""
		}
		held := titleMatches(words, own+"\n"+desc)
		if len(words) == 0 || held < need {
			continue
		}
		// The snippet is the title, its words of q marked; when the
		// words are in the description alone, the title and the
		// description.
		text := h.SessionTitle
		if desc != "" && titleMatches(words, own) < held {
			if text != "" {
				text += " — "
			}
			text += strings.Join(strings.Fields(desc), " ")
		}
		// The text for now; the snippets of the hits kept are made
		// together below, a gate (loom.SearchQuery.Gate) reading them
		// as one.
		h.CreatedAt, h.Snippet = value().UTC(), text
		h.Score = float64(held) / float64(len(words))
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search titles: %w", err)
	}
	slices.SortStableFunc(hits, func(a, b loom.SearchHit) int { return cmp.Compare(b.Score, a.Score) })
	hits = hits[:min(len(hits), limit)]
	windows := make([]snippet.Window, len(hits))
	for i, h := range hits {
		windows[i] = snippet.Window{Text: h.Snippet}
	}
	for i, sn := range m.MakeWindows(windows, start, end) {
		hits[i].Snippet = sn
	}
	return hits, nil
}
