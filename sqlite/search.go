package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
)

// MatchExpr renders a user's query as an FTS5 expression in which every
// term must appear: each word and each phrase becomes a quoted FTS5
// string, so nothing the user types is read as syntax. It returns "" when
// the query has no words.
func MatchExpr(q string) string {
	terms := loom.ParseQuery(q)
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		parts = append(parts, `"`+strings.ReplaceAll(strings.Join(t.Words, " "), `"`, `""`)+`"`)
	}
	return strings.Join(parts, " ")
}

// Search implements loom.Store. Ranking and filtering run first; snippets
// are made afterwards for the returned rows only, since making one costs
// far more than ranking a row.
func (s *Store) Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error) {
	expr := q.Text
	if !q.Raw {
		expr = MatchExpr(q.Text)
	}
	if strings.TrimSpace(expr) == "" {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	where := []string{"bodies_fts MATCH ?", "s.deleted_at IS NULL"}
	args := []any{expr}
	add := func(cond string, a any) { where = append(where, cond); args = append(args, a) }
	if q.UserID != "" {
		add("s.user_id = ?", q.UserID)
	}
	if q.SessionID != "" {
		add("m.session_id = ?", q.SessionID)
	}
	if q.ProjectID != "" {
		add("s.project_id = ?", q.ProjectID)
	}
	if q.Surface != "" {
		add("s.surface = ?", q.Surface)
	}
	if q.Role != "" {
		add("m.role = ?", q.Role)
	}
	if !q.Since.IsZero() {
		add("m.created_at >= ?", loom.FormatTime(q.Since))
	}
	if !q.Until.IsZero() {
		add("m.created_at < ?", loom.FormatTime(q.Until))
	}
	args = append(args, limit)
	rows, err := reads{s}.QueryContext(ctx, `SELECT m.session_id, m.id, m.seq, m.role, m.created_at,
		-bodies_fts.rank, bodies_fts.rowid, s.title, coalesce(s.key, '')
		FROM bodies_fts
		JOIN messages m ON m.body_id = bodies_fts.rowid
		JOIN sessions s ON s.id = m.session_id
		WHERE `+strings.Join(where, " AND ")+`
		ORDER BY bodies_fts.rank, m.created_at DESC LIMIT ?`, args...)
	if err != nil {
		return nil, searchError(err, q.Raw)
	}
	var hits []loom.SearchHit
	var bodies []int64
	for rows.Next() {
		var h loom.SearchHit
		var created sql.NullString
		var body int64
		if err := rows.Scan(&h.SessionID, &h.MessageID, &h.Seq, &h.Role, &created, &h.Score, &body, &h.SessionTitle, &h.SessionKey); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		h.CreatedAt = parseTime(created)
		hits = append(hits, h)
		bodies = append(bodies, body)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, searchError(err, q.Raw)
	}
	if len(hits) == 0 {
		return nil, nil
	}
	snippets, err := s.snippets(ctx, expr, bodies, q)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Snippet = snippets[bodies[i]]
	}
	return hits, nil
}

func (s *Store) snippets(ctx context.Context, expr string, bodies []int64, q loom.SearchQuery) (map[int64]string, error) {
	start, end := q.MarkStart, q.MarkEnd
	if start == "" && end == "" {
		start, end = loom.DefaultMarkStart, loom.DefaultMarkEnd
	}
	ph := strings.TrimSuffix(strings.Repeat("?,", len(bodies)), ",")
	args := []any{start, end, expr}
	for _, b := range bodies {
		args = append(args, b)
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT rowid, snippet(bodies_fts, 0, ?, ?, '…', 24)
		FROM bodies_fts WHERE bodies_fts MATCH ? AND rowid IN (`+ph+`)`, args...)
	if err != nil {
		return nil, searchError(err, q.Raw)
	}
	defer rows.Close()
	out := make(map[int64]string, len(bodies))
	for rows.Next() {
		var id int64
		var snip string
		if err := rows.Scan(&id, &snip); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		out[id] = snip
	}
	return out, rows.Err()
}

// searchError turns an FTS5 syntax error in a raw query into an invalid
// input error; any other error stays internal.
func searchError(err error, raw bool) error {
	if raw && (strings.Contains(err.Error(), "fts5") || strings.Contains(err.Error(), "syntax error") || strings.Contains(err.Error(), "no such column")) {
		return loom.Errorf(loom.EINVALID, "search query: %s", strings.TrimPrefix(err.Error(), "SQL logic error: "))
	}
	return fmt.Errorf("search: %w", err)
}
