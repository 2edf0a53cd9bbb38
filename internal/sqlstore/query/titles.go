package query

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/snippet"
)

// TitleSQL returns the statement of a search of session titles
// (loom.SearchQuery.Titles) in d's dialect, and its arguments: each hit
// is the first prompt (else the first message) of a session that passes
// q's filters and whose title or description (where a summary is kept)
// holds the words of terms, each as typed or by its stem; the score is
// how many of them they hold, and they must hold two of them (one, of a
// query of one word). Its columns are m.session_id, m.id, m.seq, m.role,
// m.created_at, the score, s.title, s.key, s.description and m.body_id. ok is false
// when terms have no words.
func TitleSQL(d Dialect, q loom.SearchQuery, terms []loom.Term) (sql string, args []any, ok bool) {
	var pats []string
	for _, t := range terms {
		if t.Phrase || t.Prefix || len(t.Alts) > 0 {
			continue
		}
		for _, w := range t.Words {
			w = strings.ToLower(w)
			// A stem of three letters or more matches the title's
			// word forms ("configur" in "Configure the pool").
			if s := english.Stem(w, false); utf8.RuneCountInString(s) >= 3 {
				w = s
			}
			pats = append(pats, "%"+w+"%")
		}
	}
	if len(pats) == 0 {
		return "", nil, false
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
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
	score.WriteString("(")
	for i, p := range pats {
		if i > 0 {
			score.WriteString(" + ")
		}
		score.WriteString(c.SQL("CASE WHEN s.title "+d.like()+" ? OR s.description "+d.like()+" ? THEN 1.0 ELSE 0.0 END", p, p))
	}
	score.WriteString(")")
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
	return fmt.Sprintf(`WITH t AS MATERIALIZED (%s)
		SELECT m.session_id, m.id, m.seq, m.role, m.created_at, t.score, s.title, coalesce(s.key, ''), s.description, m.body_id
		FROM t %s sessions s ON s.id = t.id %s session_messages m ON m.session_id = s.id
			AND m.seq = (SELECT coalesce(min(f.seq), 1) FROM session_messages f WHERE f.session_id = s.id AND f.role = 'user')
		WHERE %s
		ORDER BY 6 DESC, t.updated_at DESC, s.id
		LIMIT %d`, found, d.Join, d.Join, c.String(), limit), c.Args, true
}

// Rows are the rows of a statement, as both engines' drivers return them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// TitleHits reads the hits of a TitleSQL statement; created returns
// where the engine scans a time into, and how to read it after.
func TitleHits(rows Rows, q loom.SearchQuery, created func() (dest any, value func() time.Time)) ([]loom.SearchHit, error) {
	start, end := q.Marks()
	m := snippet.ForQuery(q)
	var hits []loom.SearchHit
	for rows.Next() {
		var h loom.SearchHit
		var desc string
		dest, value := created()
		if err := rows.Scan(&h.SessionID, &h.MessageID, &h.Seq, &h.Role, dest, &h.Score, &h.SessionTitle, &h.SessionKey, &desc, &h.Body); err != nil {
			return nil, fmt.Errorf("search titles: %w", err)
		}
		// The snippet is the title, its words of q marked; when the
		// words are in the description alone, the title and the
		// description.
		text := h.SessionTitle
		if desc != "" && !strings.Contains(m.Make(text, "\x00", ""), "\x00") {
			if text != "" {
				text += " — "
			}
			text += strings.Join(strings.Fields(desc), " ")
		}
		h.CreatedAt, h.Snippet = value().UTC(), m.Make(text, start, end)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search titles: %w", err)
	}
	return hits, nil
}
