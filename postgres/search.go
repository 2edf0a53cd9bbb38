package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/query"
	"github.com/loomhq/loom/snippet"
)

// matchQuery is SQL for a tsquery in which every term of a user's query
// must appear. Its first argument holds its words, separated by spaces:
// plainto_tsquery ANDs them. Its second holds its phrases, each through
// phraseto_tsquery. Nothing the user types is read as syntax, stop words
// drop out, and the statement is the same whatever the number of terms.
const matchQuery = `plainto_tsquery('english', ?::text) && coalesce((
	SELECT string_agg('(' || pq::text || ')', ' & ')::tsquery
	FROM unnest(?::text[]) AS p, phraseto_tsquery('english', p) AS pq
	WHERE numnode(pq) > 0), ''::tsquery)`

// queryArgs splits a user's parsed query into the words and phrases of
// matchQuery. It reports false when the query has no words. The limits
// of loom.ParseQuery keep the tsquery small: PostgreSQL builds and
// matches it recursively, and matches phrases in time that grows faster
// than their number.
func queryArgs(terms []loom.Term) (words string, phrases []string, ok bool) {
	var ws []string
	phrases = []string{}
	for _, t := range terms {
		if t.Phrase {
			phrases = append(phrases, strings.Join(t.Words, " "))
		} else {
			ws = append(ws, t.Words...)
		}
	}
	return strings.Join(ws, " "), phrases, len(ws)+len(phrases) > 0
}

// Search implements loom.Store, within the limits loom.RunSearch sets.
func (s *Store) Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error) {
	return loom.RunSearch(ctx, q, func(ctx context.Context, terms []loom.Term) ([]loom.SearchHit, error) {
		return s.search(ctx, q, terms)
	})
}

// search runs q, whose text parses into terms. Ranking and filtering run
// in the inner, limited query; the outer one reads the start of the
// returned rows' text only, from which snippets are made in Go, as
// SQLite's are.
func (s *Store) search(ctx context.Context, q loom.SearchQuery, terms []loom.Term) ([]loom.SearchHit, error) {
	// A filter PostgreSQL cannot hold matches nothing it stores.
	if !storable(q.UserID, q.SessionID, q.ProjectID, q.Surface, q.Role) {
		return nil, nil
	}
	c := query.New(dialect)
	var expr string
	if q.Raw {
		if strings.TrimSpace(q.Text) == "" {
			return nil, nil
		}
		expr = c.SQL("to_tsquery('english', ?::text)", clean(q.Text))
	} else {
		words, phrases, ok := queryArgs(terms)
		if !ok {
			return nil, nil
		}
		expr = c.SQL(matchQuery, words, phrases)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	c.Add("b.search @@ q.q")
	c.Search(q)
	// Score: ts_rank with normalisation 1 (divided by 1 + the log of the
	// length). Like bm25 it favours messages that say the terms often and
	// tempers long ones. Of each returned message, only the start that a
	// snippet needs is read (substr counts characters: MaxText+1 of them
	// are at least as many bytes, or the whole text).
	rows, err := s.pool.Query(ctx, `WITH q AS NOT MATERIALIZED (SELECT `+expr+` AS q)
		SELECT h.session_id, h.id, h.seq, h.role, h.created_at, h.score, h.title, h.key,
			substr(b.content, 1, `+fmt.Sprint(snippet.MaxText+1)+`)
		FROM (
			SELECT m.session_id, m.id, m.seq, m.role, m.created_at, m.body_id,
				ts_rank(b.search, q.q, 1) AS score, s.title, coalesce(s.key, '') AS key
			FROM q, bodies b
			JOIN session_messages m ON m.body_id = b.id
			JOIN sessions s ON s.id = m.session_id
			WHERE numnode(q.q) > 0 AND `+c.String()+`
			ORDER BY score DESC, m.created_at DESC, m.session_id, m.seq
			LIMIT `+fmt.Sprint(limit)+`
		) h
		JOIN bodies b ON b.id = h.body_id
		ORDER BY h.score DESC, h.created_at DESC, h.session_id, h.seq`, c.Args...)
	if err != nil {
		return nil, searchError(err, q.Raw)
	}
	defer rows.Close()
	m := snippet.NewMatcher(q.Text)
	start, end := q.Marks()
	var hits []loom.SearchHit
	for rows.Next() {
		var h loom.SearchHit
		var score float32
		var text string
		if err := rows.Scan(&h.SessionID, &h.MessageID, &h.Seq, &h.Role, &h.CreatedAt, &score, &h.SessionTitle, &h.SessionKey, &text); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		h.CreatedAt, h.Score = utc(h.CreatedAt), float64(score)
		h.Snippet = m.MakeWindow(snippet.Prefix(text), start, end)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, searchError(err, q.Raw)
	}
	return hits, nil
}

// searchError turns a syntax error in a raw query into an invalid input
// error; any other error stays internal.
func searchError(err error, raw bool) error {
	if raw {
		switch code := pgCode(err); {
		case code == "42601", code == "54000", code == "54001", code == "22021", code == "22P05", code == "22023",
			// Operators nested deeper than the parser's stack (!!!…)
			// are reported as an internal error, by message only.
			code == "XX000" && strings.HasPrefix(serverMessage(err), "tsquery stack too small"):
			return loom.Errorf(loom.EINVALID, "search query: %s", serverMessage(err))
		}
	}
	return fmt.Errorf("search: %w", err)
}
