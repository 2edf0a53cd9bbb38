package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/query"
)

// Clean is clean, for tests.
var Clean = clean

// ImportVectors computes the search vectors of texts as an import's
// helpers do, on conns (at least one) other connections, and returns them
// in COPY's binary form.
func (s *Store) ImportVectors(ctx context.Context, texts []string, conns int) ([][]byte, error) {
	cleaned := make([]string, len(texts))
	for i, t := range texts {
		cleaned[i] = clean(t)
	}
	vs := computeVectors(ctx, s.pool.Pool, cleaned, conns)
	defer vs.stop()
	out := make([][]byte, 0, len(texts))
	for i := range vs.ready {
		vecs, err := vs.wait(ctx, i)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// SearchStatements returns the ranked statement of a search and its
// arguments.
func SearchStatements(q loom.SearchQuery, terms []loom.Term) (ranked string, args []any, ok bool) {
	st, ok := searchStatements(q, terms, "", "")
	return st.ranked, st.args, ok
}

// TitleStatement returns the statement of a search of session titles
// and its arguments.
func TitleStatement(q loom.SearchQuery, terms []loom.Term) (string, []any, bool) {
	return query.TitleSQL(dialect, q, terms)
}

// NamedStatement returns the statement with which a search finds the
// sessions that hold one of its names (NamedSessions), and its
// arguments.
func NamedStatement(q loom.SearchQuery, name string, depth int) (string, []any) {
	return namedSQL(q, loom.Term{Words: []string{name}}, depth)
}

// BroadPool returns the statement with which a search of the any-word
// query q, with more than RankDepth matches, ranks the store's newest
// (rankBroad), its arguments, and whether it is run with sequential
// scans off (rankedThroughIndex).
func (s *Store) BroadPool(ctx context.Context, q loom.SearchQuery) (string, []any, bool, error) {
	q.AnyWord = true
	terms, err := q.Terms()
	if err != nil {
		return "", nil, false, err
	}
	w, err := s.rarity(ctx, terms)
	if err != nil {
		return "", nil, false, err
	}
	st, _ := searchStatements(q, terms, w.score, "")
	return newestPool(st, w), st.args, fewMatches(w.parts, w.total), nil
}

// CommonParts returns how many of total messages hold each of tsqs,
// tsquery texts each counted to RarityDepth, as the statistics say
// (commonParts), and whether that many is a floor only.
func (s *Store) CommonParts(ctx context.Context, tsqs []string, total float64) ([]int64, []bool, error) {
	parts := make([]weighedPart, len(tsqs))
	for i, t := range tsqs {
		parts[i] = weighedPart{tsq: "'" + strings.ReplaceAll(t, "'", "''") + "'::tsquery", n: RarityDepth}
	}
	if err := s.commonParts(ctx, parts, total); err != nil {
		return nil, nil, err
	}
	ns, floors := make([]int64, len(parts)), make([]bool, len(parts))
	for i, p := range parts {
		ns[i], floors[i] = p.n, p.floor
	}
	return ns, floors, nil
}

// Setting returns a server setting as the store's connections see it.
func (s *Store) Setting(ctx context.Context, name string) (string, error) {
	var v string
	err := s.pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}

// Statements is the store's pool as the store's own statements use it
// (connPool: their errors when their context ends, their rollbacks).
func Statements(s *Store) interface {
	QueryRow(context.Context, string, ...any) pgx.Row
	BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error)
} {
	return s.pool
}
