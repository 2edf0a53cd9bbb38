package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/loomhq/loom"
)

// Placeholders ts_headline writes around a match; they are replaced with
// the caller's markers afterwards, so that markers need no quoting in the
// option string.
const (
	markStart = "\x02"
	markEnd   = "\x03"
	// separator is what loom_search_text puts around punctuation.
	separator = "\x1f"
	// ellipsis stands for text a snippet leaves out, as in SQLite's.
	ellipsis = "…"
)

// headlineOptions: one fragment around the best match of about as many
// words as SQLite's 24-token snippet.
const headlineOptions = `StartSel=` + markStart + `, StopSel=` + markEnd + `, MaxFragments=1, MaxWords=24, MinWords=12, ShortWord=0`

// wordChar matches a character of a word: anything but white space,
// punctuation and control characters (the separator among them).
const wordChar = `'[^[:space:][:punct:][:cntrl:]]'`

// matchQuery is SQL for a tsquery in which every term of a user's query
// must appear. $1 holds its words, separated by spaces: plainto_tsquery
// ANDs them. $2 holds its phrases, each through phraseto_tsquery. Nothing
// the user types is read as syntax, stop words drop out, and the statement
// is the same whatever the number of terms.
const matchQuery = `plainto_tsquery('english', $1::text) && coalesce((
	SELECT string_agg('(' || pq::text || ')', ' & ')::tsquery
	FROM unnest($2::text[]) AS p, phraseto_tsquery('english', p) AS pq
	WHERE numnode(pq) > 0), ''::tsquery)`

// Limits that keep every query cheap and within what a tsquery can hold
// (PostgreSQL builds and matches its tree recursively, and phrase
// matching and snippets cost far more than linear time in the number of
// phrases). A query uses its first maxQueryWords distinct words, of which
// at most maxQueryPhrases phrases; a longer phrase is matched as
// consecutive phrases of maxPhraseWords. No one types queries near these
// sizes; a pasted document gets a best-effort search instead of an error
// or a minute-long wait.
const (
	maxQueryWords   = 64
	maxQueryPhrases = 16
	maxPhraseWords  = 32
	// maxRawQuery bounds a query in PostgreSQL's own syntax, which
	// loom does not rewrite.
	maxRawQuery = 4096
	// maxLexeme is the longest word PostgreSQL indexes; longer ones are
	// left out of both the index and the query.
	maxLexeme = 2047
)

// queryArgs splits a user's query into the words and phrases of
// matchQuery. It reports false when the query has no words.
func queryArgs(q string) (words string, phrases []string, ok bool) {
	var ws []string
	phrases = []string{}
	seen := map[string]bool{}
	budget := maxQueryWords
	for _, t := range loom.ParseQuery(q) {
		var kept []string
		for _, w := range t.Words {
			if len(w) <= maxLexeme && budget > 0 {
				kept = append(kept, w)
				budget--
			}
		}
		if !t.Phrase {
			for _, w := range kept {
				if k := strings.ToLower(w); !seen[k] {
					seen[k] = true
					ws = append(ws, w)
				} else {
					budget++
				}
			}
			continue
		}
		for p := range slices.Chunk(kept, maxPhraseWords) {
			phrase := strings.Join(p, " ")
			if k := "\x00" + strings.ToLower(phrase); !seen[k] && len(phrases) < maxQueryPhrases {
				seen[k] = true
				phrases = append(phrases, phrase)
			} else {
				budget += len(p)
			}
		}
	}
	return strings.Join(ws, " "), phrases, len(ws)+len(phrases) > 0
}

// Search implements loom.Store. Ranking and filtering run in the inner,
// limited query; snippets are made by the outer one for the returned rows
// only, since making one costs far more than ranking a row.
func (s *Store) Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error) {
	var c conds
	var expr string
	if q.Raw {
		if strings.TrimSpace(q.Text) == "" {
			return nil, nil
		}
		if len(q.Text) > maxRawQuery {
			return nil, loom.Errorf(loom.EINVALID, "search query: a raw query may be at most %d bytes", maxRawQuery)
		}
		c.args = append(c.args, clean(q.Text))
		expr = "to_tsquery('english', $1::text)"
	} else {
		words, phrases, ok := queryArgs(q.Text)
		if !ok {
			return nil, nil
		}
		expr = matchQuery
		c.args = append(c.args, words, phrases)
	}
	// A filter PostgreSQL cannot hold matches nothing it stores.
	if !storable(q.UserID, q.SessionID, q.ProjectID, q.Surface, q.Role) {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	c.add("b.search @@ q.q")
	c.add("s.deleted_at IS NULL")
	if q.UserID != "" {
		c.add("s.user_id = ?", q.UserID)
	}
	if q.SessionID != "" {
		c.add("m.session_id = ?", q.SessionID)
	}
	if q.ProjectID != "" {
		c.add("s.project_id = ?", q.ProjectID)
	}
	if q.Surface != "" {
		c.add("s.surface = ?", q.Surface)
	}
	if q.Role != "" {
		c.add("m.role = ?", q.Role)
	}
	if !q.Since.IsZero() {
		c.add("m.created_at >= ?", ms(q.Since))
	}
	if !q.Until.IsZero() {
		c.add("m.created_at < ?", ms(q.Until))
	}
	// Score: ts_rank with normalisation 1 (divided by 1 + the log of the
	// length). Like bm25 it favours messages that say the terms often and
	// tempers long ones.
	//
	// The outer query makes a snippet for each returned row. ts_headline
	// trims the punctuation around its fragment; when the fragment starts
	// (ends) the message, the query returns the few characters before
	// (after) it, to put back; otherwise NULL, and "…" marks the text
	// left out, as in SQLite's snippets.
	rows, err := s.pool.Query(ctx, `WITH q AS NOT MATERIALIZED (SELECT `+expr+` AS q)
		SELECT h.session_id, h.id, h.seq, h.role, h.created_at, h.score, h.title, h.key, x.hl,
			CASE WHEN p.pos BETWEEN 1 AND 33 AND left(n.nc, p.pos - 1) !~ `+wordChar+`
				THEN left(n.nc, p.pos - 1) END,
			CASE WHEN p.pos > 0 AND length(n.nc) - p.pos - p.len < 32 AND substr(n.nc, p.pos + p.len) !~ `+wordChar+`
				THEN substr(n.nc, p.pos + p.len) END
		FROM (
			SELECT m.session_id, m.id, m.seq, m.role, m.created_at, m.body_id,
				ts_rank(b.search, q.q, 1) AS score, s.title, coalesce(s.key, '') AS key
			FROM q, bodies b
			JOIN messages m ON m.body_id = b.id
			JOIN sessions s ON s.id = m.session_id
			WHERE numnode(q.q) > 0 AND `+c.String()+`
			ORDER BY score DESC, m.created_at DESC, m.session_id, m.seq
			LIMIT `+fmt.Sprint(limit)+`
		) h
		JOIN bodies b ON b.id = h.body_id
		CROSS JOIN q
		CROSS JOIN LATERAL (SELECT loom_search_text(b.content) AS nc) n
		CROSS JOIN LATERAL (SELECT ts_headline('english', n.nc, q.q, '`+headlineOptions+`') AS hl) x
		CROSS JOIN LATERAL (SELECT strpos(n.nc, t.plain) AS pos, length(t.plain) AS len
			FROM (SELECT translate(x.hl, '`+markStart+markEnd+`', '') AS plain) t) p
		ORDER BY h.score DESC, h.created_at DESC, h.session_id, h.seq`, c.args...)
	if err != nil {
		return nil, searchError(err, q.Raw)
	}
	defer rows.Close()
	start, end := q.MarkStart, q.MarkEnd
	if start == "" && end == "" {
		start, end = loom.DefaultMarkStart, loom.DefaultMarkEnd
	}
	marks := strings.NewReplacer(separator, "", markStart, start, markEnd, end)
	var hits []loom.SearchHit
	for rows.Next() {
		var h loom.SearchHit
		var score float32
		var snippet string
		var lead, trail *string
		if err := rows.Scan(&h.SessionID, &h.MessageID, &h.Seq, &h.Role, &h.CreatedAt, &score, &h.SessionTitle, &h.SessionKey,
			&snippet, &lead, &trail); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		h.CreatedAt, h.Score = utc(h.CreatedAt), float64(score)
		h.Snippet = edge(lead, strings.TrimLeftFunc, marks) + marks.Replace(snippet) + edge(trail, strings.TrimRightFunc, marks)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, searchError(err, q.Raw)
	}
	return hits, nil
}

// edge is what goes before or after a snippet: the message's own
// punctuation when the snippet reaches its start or end, else "…".
func edge(text *string, trim func(string, func(rune) bool) string, marks *strings.Replacer) string {
	if text == nil {
		return ellipsis
	}
	return trim(marks.Replace(*text), unicode.IsSpace)
}

// searchError turns a syntax error in a raw query into an invalid input
// error; any other error stays internal.
func searchError(err error, raw bool) error {
	if raw {
		switch pgCode(err) {
		case "42601", "54000", "54001", "22021", "22P05", "22023":
			return loom.Errorf(loom.EINVALID, "search query: %s", serverMessage(err))
		}
	}
	return fmt.Errorf("search: %w", err)
}
