package postgres

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/snippet"
)

// RankDepth is the most matches a search ranks. A query with more
// matches in the store (its words too common to tell messages apart)
// returns its newest matches first, scored by recency, as the SQLite
// engine does: ranking every match of a word found in most of a million
// messages takes seconds.
const RankDepth = 2000

// ScanDepth is how many of a broad query's newest matches in the store
// are looked through for those that pass its filters before the filters
// choose where to look.
const ScanDepth = 20000

// matchExpr returns SQL for a tsquery in which every term of a user's
// query must appear, each ? in it standing for the next of args: all
// words through one plainto_tsquery, which ANDs them, and each phrase
// through phraseto_tsquery, joined with &&. Nothing the user types is
// read as syntax, and stop words drop out (&& drops an empty operand).
// The expression is immutable calls on the arguments only, so that the
// planner folds it into a constant and reads from the search column's
// statistics how common its words are. ok is false when the query has no
// words. The limits of loom.ParseQuery keep the tsquery small: PostgreSQL
// builds and matches it recursively, and matches phrases in time that
// grows faster than their number.
//
// With anyTerm, any term matches instead of every one: each word through
// a plainto_tsquery of its own, and each phrase, joined with || (which
// drops an empty operand, a stop word, as && does).
func matchExpr(terms []loom.Term, anyTerm bool) (sql string, args []any, ok bool) {
	var words []string
	var parts []string
	for _, t := range terms {
		switch {
		case len(t.Alts) > 0 || t.Prefix:
			sql, as := termSQL(t)
			parts = append(parts, sql)
			args = append(args, as...)
		case t.Phrase:
			parts = append(parts, "phraseto_tsquery('english', ?::text)")
			args = append(args, strings.Join(t.Words, " "))
		case anyTerm:
			for _, w := range t.Words {
				parts = append(parts, "plainto_tsquery('english', ?::text)")
				args = append(args, w)
			}
		default:
			words = append(words, t.Words...)
		}
	}
	if len(words) > 0 {
		parts = append([]string{"plainto_tsquery('english', ?::text)"}, parts...)
		args = append([]any{strings.Join(words, " ")}, args...)
	}
	join := " && "
	if anyTerm {
		join = " || "
	}
	return strings.Join(parts, join), args, len(parts) > 0
}

// RarityDepth is how many of the messages holding a word an any-word
// search counts to weigh it (see rarity).
const RarityDepth = 10000

// rarity returns the score of an any-word search of terms: each term's
// ts_rank weighed by bm25's inverse document frequency, ln((N - n + 0.5)
// / (n + 0.5)) for the n messages of N that hold it (n counted up to
// RarityDepth; N the planner's estimate, the rows per page last
// analyzed times the pages now, or a count up to RarityDepth where it
// has none), at least 0.000001 as FTS5 keeps it: a rare word
// weighs more than a common one said often, as in SQLite; ts_rank alone
// knows nothing of other messages. The sum is weighed by the share of
// the terms a message holds (sqlstore.Coordinated). The counts run
// first, in one statement, and the score holds their results and each
// term's tsquery as constants, so that it takes no arguments of its own.
func (s *Store) rarity(ctx context.Context, terms []loom.Term) (weights, error) {
	c := query.New(dialect)
	var cols []string
	// counted says, for each of cols, whether its messages were counted.
	var counted []bool
	for _, t := range terms {
		var parts []string
		var args [][]any
		switch {
		case len(t.Alts) > 0 || t.Prefix:
			sql, as := termSQL(t)
			parts, args = []string{sql}, [][]any{as}
		case t.Phrase:
			parts, args = []string{"phraseto_tsquery('english', ?::text)"}, [][]any{{strings.Join(t.Words, " ")}}
		default:
			for _, w := range t.Words {
				parts, args = append(parts, "plainto_tsquery('english', ?::text)"), append(args, []any{w})
			}
		}
		count := func(q string) string {
			return fmt.Sprintf("(SELECT count(*) FROM (SELECT FROM bodies r WHERE r.search @@ %s LIMIT %d) n)", q, RarityDepth)
		}
		for i, p := range parts {
			q := c.SQL(p, args[i]...)
			var n string
			switch {
			case len(terms) == 1 && len(parts) == 1:
				// One term: its weight, the same for every message,
				// changes no order, so its messages are not counted.
				n = "0"
				counted = append(counted, false)
			case len(t.Alts) > 1:
				// The messages holding any of the alternatives (a fuzzy
				// tier's variants of a word), counted one alternative at
				// a time: the planner guesses that a tsquery of many
				// unknown words matches tens of thousands of messages,
				// and with LIMIT read the whole table for the eleven
				// holding one (0.8 s at a million messages), where one
				// word at a time is a look-up in the index each.
				var ns []string
				for _, a := range t.Alts {
					sql, as := termSQL(a)
					ns = append(ns, count(c.SQL(sql, as...)))
				}
				n = "least(" + strings.Join(ns, " + ") + ", " + strconv.Itoa(RarityDepth) + ")"
				counted = append(counted, true)
			default:
				n = count(q)
				counted = append(counted, true)
			}
			cols = append(cols, fmt.Sprintf("(%s)::text, (%s)::float8", q, n))
		}
	}
	if len(cols) == 0 {
		return weights{score: "0"}, nil
	}
	rows, err := s.pool.Query(ctx, fmt.Sprintf(`SELECT greatest((SELECT CASE WHEN relpages > 0 THEN reltuples / relpages * (pg_relation_size(oid) / current_setting('block_size')::float8) ELSE reltuples END
			FROM pg_class WHERE oid = 'bodies'::regclass), (SELECT count(*) FROM (SELECT FROM bodies LIMIT %d) a))::float8, %s`,
		RarityDepth, strings.Join(cols, ", ")), append([]any{s.planMode()}, c.Args...)...)
	if err != nil {
		return weights{}, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		return weights{}, fmt.Errorf("search: %w", rows.Err())
	}
	vals, err := rows.Values()
	if err != nil {
		return weights{}, fmt.Errorf("search: %w", err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return weights{}, fmt.Errorf("search: %w", err)
	}
	total, _ := vals[0].(float64)
	out := weights{total: total}
	for i := 1; i+1 < len(vals); i += 2 {
		tsq, _ := vals[i].(string)
		n, _ := vals[i+1].(float64)
		if tsq == "" {
			continue
		}
		part := weighedPart{tsq: "'" + strings.ReplaceAll(tsq, "'", "''") + "'::tsquery", n: int64(n)}
		if !counted[i/2] {
			part.n = -1
		}
		out.parts = append(out.parts, part)
	}
	// A word counted to RarityDepth is in that many messages or more: how
	// many more, the statistics say (commonParts).
	if err := s.commonParts(ctx, out.parts, total); err != nil {
		return weights{}, err
	}
	var sum, held []string
	for i, part := range out.parts {
		// A sum of alternatives' counts may pass the total; a part not
		// counted (-1) weighs as if in none.
		n := min(max(float64(part.n), 0), total)
		out.parts[i].w = max(math.Log((total-n+0.5)/(n+0.5)), 0.000001)
		sum = append(sum, fmt.Sprintf("ts_rank(c.search, %s, 1) * %g", part.tsq, out.parts[i].w))
		held = append(held, fmt.Sprintf("(c.search @@ %s)::int", part.tsq))
	}
	out.score = "0"
	switch {
	case len(sum) > 1:
		// Weighed by the share of the terms each message holds
		// (sqlstore.Coordinated), as on SQLite.
		out.score = fmt.Sprintf("((%s) * greatest(%s, 1)::float4 / %d)", strings.Join(sum, " + "), strings.Join(held, " + "), len(sum))
	case len(sum) == 1:
		out.score = "(" + sum[0] + ")"
	}
	return out, nil
}

// weights are the score of an any-word search (rarity), its parts, the
// terms it weighs, and the number of messages they were weighed among.
type weights struct {
	score string
	parts []weighedPart
	total float64
}

// weighedPart is one term of an any-word search: its tsquery (SQL of a
// constant), how many messages hold it (counted up to RarityDepth, and
// beyond it as the statistics say, see commonParts; -1 when not
// counted), whether that many is a floor only (neither counted whole
// nor known to the statistics) and its weight.
type weighedPart struct {
	tsq   string
	n     int64
	floor bool
	w     float64
}

// termSQL returns SQL for a tsquery of one term of a search's tiers: its
// alternatives joined with ||, the single words among them (prefixes
// followed by :*) through one to_tsquery. A word is letters and digits
// only (loom.Words), so nothing in it is read as to_tsquery's syntax,
// and one to_tsquery of hundreds of words (a fuzzy tier's variants) is
// one argument rather than hundreds.
func termSQL(t loom.Term) (sql string, args []any) {
	one := func(t loom.Term) bool { return len(t.Alts) == 0 && !t.Phrase && len(t.Words) == 1 }
	word := func(t loom.Term) string {
		if t.Prefix {
			return t.Words[0] + ":*"
		}
		return t.Words[0]
	}
	if len(t.Alts) == 0 {
		switch {
		case one(t):
			return "to_tsquery('english', ?::text)", []any{word(t)}
		case t.Phrase:
			return "phraseto_tsquery('english', ?::text)", []any{strings.Join(t.Words, " ")}
		default:
			return "plainto_tsquery('english', ?::text)", []any{strings.Join(t.Words, " ")}
		}
	}
	var words, parts []string
	for _, a := range t.Alts {
		if one(a) {
			words = append(words, word(a))
			continue
		}
		sql, as := termSQL(a)
		parts = append(parts, sql)
		args = append(args, as...)
	}
	if len(words) > 0 {
		parts = append([]string{"to_tsquery('english', ?::text)"}, parts...)
		args = append([]any{strings.Join(words, " | ")}, args...)
	}
	return "(" + strings.Join(parts, " || ") + ")", args
}

// Search implements loom.Store, within the limits sqlstore.RunSearch sets.
func (s *Store) Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error) {
	return sqlstore.RunSearch(ctx, q, s.search, s)
}

// search runs q, whose text parses into terms: first the ranked
// statement, which also counts the query's matches up to RankDepth+1;
// when there are more, rankBroad.
func (s *Store) search(ctx context.Context, q loom.SearchQuery, terms []loom.Term) ([]loom.SearchHit, error) {
	if q.Titles {
		return s.searchTitles(ctx, q, terms)
	}
	var w weights
	if q.AnyWord && !q.Raw && !q.Newest {
		var err error
		if w, err = s.rarity(ctx, terms); err != nil {
			return nil, err
		}
	}
	st, ok := searchStatements(q, terms, w.score, "")
	if !ok {
		return nil, nil
	}
	if q.Newest {
		return s.newestHits(ctx, st, q)
	}
	r, matches, err := s.ranked(ctx, st.ranked, st.args, q)
	if err != nil {
		return nil, err
	}
	if matches <= RankDepth {
		return withSnippets(q, r.hits, r.texts), nil
	}
	return s.rankBroad(ctx, q, terms, w, st)
}

// ranked runs sql, a ranked statement (searchSQL), and returns its
// hits, the start of their texts (snippet.MaxText) and the number of
// matches it counted.
func (s *Store) ranked(ctx context.Context, sql string, args []any, q loom.SearchQuery) (r rankedHits, matches int64, err error) {
	return rankedOn(ctx, s.pool, sql, args, q, s.planMode())
}

// rankedThroughIndex is ranked for a statement whose matches are known
// to be best found through the search column's index (searchSQL's
// poolIndexed, for fewMatches), run in a transaction that keeps the
// planner from reading bodies whole instead. The planner prices testing
// a message against a tsquery as one operator, far below what it
// costs: at 100,000 messages it read the table for 12,000 matches
// (6 of a paraphrase's words) in 200-290 ms where the index took 30,
// and that one statement put 17 of 49 questions' searches past their
// 800 ms on a loaded machine. Without a sequential scan to choose, the
// plan is the index's bitmap; nothing else in the statement reads a
// table whole. With a hook's deadline, the same SET bounds the statement
// by it on the server (boundLocal).
func (s *Store) rankedThroughIndex(ctx context.Context, sql string, args []any, q loom.SearchQuery) (r rankedHits, matches int64, err error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return r, 0, fmt.Errorf("search: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"+boundLocal(ctx)); err != nil {
		return r, 0, fmt.Errorf("search: %w", err)
	}
	return rankedOn(ctx, tx, sql, args, q, s.planMode())
}

// rankedOn is ranked on c, a pool or a transaction.
func rankedOn(ctx context.Context, c interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string, args []any, q loom.SearchQuery, mode pgx.QueryExecMode) (r rankedHits, matches int64, err error) {
	rows, err := c.Query(ctx, sql, append([]any{mode}, args...)...)
	if err != nil {
		return r, 0, searchError(err, q.Raw)
	}
	defer rows.Close()
	for rows.Next() {
		// All but the count are NULL when no hit is ranked.
		var (
			sessionID, id, role, title, key, text *string
			seq, body                             *int64
			created                               *time.Time
			score                                 *float32
		)
		if err := rows.Scan(&matches, &sessionID, &id, &seq, &role, &created, &score, &title, &key, &text, &body); err != nil {
			return r, 0, fmt.Errorf("search: %w", err)
		}
		if sessionID == nil {
			break
		}
		r.hits = append(r.hits, loom.SearchHit{SessionID: *sessionID, MessageID: *id, Seq: *seq, Role: *role,
			CreatedAt: utc(*created), Score: float64(*score), SessionTitle: *title, SessionKey: *key})
		r.texts, r.bodies = append(r.texts, *text), append(r.bodies, *body)
	}
	if err := rows.Err(); err != nil {
		return r, 0, searchError(err, q.Raw)
	}
	return r, matches, nil
}

// rankedHits are hits with the start of their texts (snippet.MaxText)
// and the ids of their bodies.
type rankedHits struct {
	hits   []loom.SearchHit
	texts  []string
	bodies []int64
}

// scored is r's messages by body, each with its score.
func (r rankedHits) scored() []sqlstore.Scored {
	out := make([]sqlstore.Scored, len(r.hits))
	for i, h := range r.hits {
		out[i] = sqlstore.Scored{Body: r.bodies[i], Score: h.Score}
	}
	return out
}

// rankBroad ranks a query with more than RankDepth matches, whose
// statements are st, as the SQLite engine does (see its rankBroad): the
// rare terms of an any-word query (sqlstore.Selecting over the counts
// rarity made) select the messages that are ranked, each scored by every
// term (w.score: ts_rank is computed per message, so a common term adds
// to a score without its messages being read); the newest RankDepth
// matches are ranked too, and a message of common terms only may rank
// above one of a rare term. The answer is partial when a message older
// than those could have taken a place (sqlstore.MergeBroad; ts_rank is
// at most 0.1 a term), and always for an every-word or raw query, of
// which only the newest RankDepth matches are ranked.
func (s *Store) rankBroad(ctx context.Context, q loom.SearchQuery, terms []loom.Term, w weights, st searchSQL) ([]loom.SearchHit, error) {
	var selected rankedHits
	bound := 0.0
	if q.AnyWord && !q.Raw {
		counts := make([]int64, len(w.parts))
		for i, p := range w.parts {
			counts[i] = p.n
		}
		sel := sqlstore.Selecting(counts, RankDepth)
		var rare []string
		for i, p := range w.parts {
			if sel[i] {
				rare = append(rare, p.tsq)
			} else {
				bound += 0.1 * p.w
			}
		}
		if len(rare) > 0 {
			sst, _ := searchStatements(q, terms, w.score, "("+strings.Join(rare, " || ")+")")
			var err error
			if selected, _, err = s.ranked(ctx, sst.ranked, sst.args, q); err != nil {
				return nil, err
			}
		}
	}
	var pool rankedHits
	var err error
	if n := len(selected.hits); n >= st.limit && selected.hits[st.limit-1].Score >= bound {
		// No message of common terms only can take a place: the newest
		// matches, which take 2,000 look-ups to rank, are not needed.
		return broadHits(q, selected, pool, bound, false)
	}
	var inPool int64
	if q.SessionID == "" {
		rank := s.ranked
		if fewMatches(w.parts, w.total) {
			rank = s.rankedThroughIndex
		}
		if pool, inPool, err = rank(ctx, newestPool(st, w), st.args, q); err != nil {
			return nil, err
		}
	}
	whole := false
	if q.SessionID != "" || inPool < RankDepth {
		// Fewer than RankDepth of the store's newest matches pass the
		// filters (a project's, a session's): the filters choose where
		// to start, and when fewer than RankDepth pass them in all,
		// every one is ranked and the answer is exact.
		if pool, inPool, err = s.ranked(ctx, st.poolNewest, st.args, q); err != nil {
			return nil, err
		}
		whole = inPool < RankDepth
	}
	return broadHits(q, selected, pool, bound, whole)
}

// newestPool returns the statement that ranks the store's newest matches
// of a broad query whose statements are st and whose terms weigh w:
// st.poolIndexed when they are few enough (fewMatches), else st.pool.
func newestPool(st searchSQL, w weights) string {
	if fewMatches(w.parts, w.total) {
		return st.poolIndexed
	}
	return st.pool
}

// broadHits returns the best of a broad query's ranked hits, selected
// by its rare terms and pool, its newest matches, as rankBroad says;
// whole says pool holds every match that passes the filters.
func broadHits(q loom.SearchQuery, selected, pool rankedHits, bound float64, whole bool) ([]loom.SearchHit, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	best, partial := sqlstore.MergeBroad(selected.scored(), pool.scored(), limit, bound)
	partial = partial && !whole
	// The hits of the best bodies, in their order (a body read in
	// several sessions is a hit in each).
	var out []loom.SearchHit
	var texts []string
	for _, b := range best {
		seen := map[string]bool{}
		for _, r := range []rankedHits{selected, pool} {
			for i, h := range r.hits {
				if r.bodies[i] == b.Body && !seen[h.SessionID] {
					seen[h.SessionID] = true
					h.Partial = partial || !q.AnyWord || q.Raw
					out, texts = append(out, h), append(texts, r.texts[i])
				}
			}
		}
	}
	return withSnippets(q, out, texts), nil
}

// withSnippets returns the hits that q keeps (sqlstore.Kept), each with
// its snippet, made from its text.
func withSnippets(q loom.SearchQuery, hits []loom.SearchHit, texts []string) []loom.SearchHit {
	kept := sqlstore.Kept(q, hits)
	if len(kept) == 0 {
		// No hit reads as none, as on SQLite (null in JSON, not []).
		return nil
	}
	start, end := q.Marks()
	out := make([]loom.SearchHit, 0, len(kept))
	windows := make([]snippet.Window, 0, len(kept))
	for _, i := range kept {
		out = append(out, hits[i])
		windows = append(windows, snippet.Prefix(texts[i]))
	}
	// Made together: a gate (loom.SearchQuery.Gate) reads them all as
	// one.
	for i, sn := range snippet.ForQuery(q).MakeWindows(windows, start, end) {
		out[i].Snippet = sn
	}
	return out
}

// searchTitles matches session titles (loom.SearchQuery.Titles).
func (s *Store) searchTitles(ctx context.Context, q loom.SearchQuery, terms []loom.Term) ([]loom.SearchHit, error) {
	if !storable(q.UserID, q.SessionID, q.ProjectID, q.Surface, q.Role) {
		return nil, nil
	}
	stmt, args, ok := query.TitleSQL(dialect, q, terms)
	if !ok {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("search titles: %w", err)
	}
	defer rows.Close()
	return query.TitleHits(rows, q, terms, func() (any, func() time.Time) {
		var t time.Time
		return &t, func() time.Time { return t }
	})
}

// newestHits returns the newest of a query's hits, scored by recency:
// what a query with too many matches to rank returns, and a search for
// the newest matches only (loom.SearchQuery.Newest). Outside one
// session, the newest ScanDepth matches of the store are walked first;
// when fewer than the limit of them pass the filters, the filters choose
// where to start.
func (s *Store) newestHits(ctx context.Context, st searchSQL, q loom.SearchQuery) ([]loom.SearchHit, error) {
	var hits []loom.SearchHit
	var bodies []int64
	var texts []string
	var err error
	if q.SessionID == "" {
		if hits, bodies, texts, err = s.newest(ctx, st.walk, st.args, q); err != nil {
			return nil, err
		}
	}
	if len(hits) < st.limit {
		if hits, bodies, texts, err = s.newest(ctx, st.newest, st.args, q); err != nil {
			return nil, err
		}
	}
	// Scored by recency, newest 1, so that scores still sort best first.
	for i := range hits {
		hits[i].Score = float64(bodies[i]) / float64(bodies[0])
	}
	return withSnippets(q, hits, texts), nil
}

// newest runs sql, one of the statements that return a broad query's
// hits newest first, and returns them with their bodies' ids and the
// start of their texts (snippet.MaxText).
func (s *Store) newest(ctx context.Context, sql string, args []any, q loom.SearchQuery) ([]loom.SearchHit, []int64, []string, error) {
	rows, err := s.pool.Query(ctx, sql, append([]any{s.planMode()}, args...)...)
	if err != nil {
		return nil, nil, nil, searchError(err, q.Raw)
	}
	defer rows.Close()
	var hits []loom.SearchHit
	var bodies []int64
	var texts []string
	for rows.Next() {
		var h loom.SearchHit
		var body int64
		var text string
		if err := rows.Scan(&h.SessionID, &h.MessageID, &h.Seq, &h.Role, &h.CreatedAt, &body, &h.SessionTitle, &h.SessionKey, &text); err != nil {
			return nil, nil, nil, fmt.Errorf("search: %w", err)
		}
		h.CreatedAt = utc(h.CreatedAt)
		hits = append(hits, h)
		bodies = append(bodies, body)
		texts = append(texts, text)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, searchError(err, q.Raw)
	}
	return hits, bodies, texts, nil
}

// planMode is how search statements are sent. Each is planned for its
// own arguments (an unnamed statement, its description cached), never
// by a plan made once for any: the plan for a word in most messages is
// not the plan for a word in none, and only the arguments tell which.
// A pool set to send statements otherwise (simple protocol, exec) keeps
// its setting; those plan each statement for its arguments too.
func (s *Store) planMode() pgx.QueryExecMode {
	if m := s.pool.Config().ConnConfig.DefaultQueryExecMode; m != pgx.QueryExecModeCacheStatement {
		return m
	}
	return pgx.QueryExecModeCacheDescribe
}

// lookup joins each match c to its messages m (through the spans, each
// session that reads the row: a fork reads its parent's) and their
// sessions s by index, one lookup each (messages_body and spans_store,
// then the sessions' primary key). They are lateral subqueries that OFFSET 0 keeps from being
// flattened or taking the filters in, so that neither a filter nor
// missing statistics can make the planner start from a session's or a
// project's messages, or from a user's sessions, instead.
const lookup = `CROSS JOIN LATERAL (
		SELECT session_id, id, seq, role, created_at FROM session_messages WHERE body_id = c.id OFFSET 0
	) m
	CROSS JOIN LATERAL (
		SELECT title, key, user_id, project_id, surface, deleted_at, archived_at, message_count FROM sessions WHERE id = m.session_id OFFSET 0
	) s`

// searchSQL are the statements of one search, their arguments, and the
// most hits it returns.
type searchSQL struct {
	ranked, walk, newest, pool, poolIndexed, poolNewest string
	args                                                []any
	limit                                               int
}

// searchStatements returns the statements that run q, whose text parses
// into terms; ok is false when q can match nothing.
//
// ranked finds matches through the search column's GIN index first and
// applies q's filters to what it found. It is one row per hit (at most
// q.Limit), each with the number of matches in the store up to
// RankDepth+1, or a single row of that number and NULLs when no hit is
// ranked. Its matches are a CTE computed lazily: the count reads at most
// RankDepth+1 of them, and only when there are no more does each look up
// its messages and sessions (see lookup), keep those that pass the
// filters, and rank them. The CTE is planned to return all its rows, so a
// LIMIT cannot make a scan of the whole table look cheap for a word the
// statistics call common.
//
// walk and newest return q.Limit hits of a query with more matches,
// newest first. walk looks through the store's ScanDepth newest matches
// (walking bodies backwards for a common word, through the index for a
// rarer one: the planner's choice, from the statistics), and looks up
// the messages of each as ranked does. newest is left to the planner, for
// filters that select few messages: a session's, or a user's few among
// many users'.
//
// pool and poolNewest rank the newest RankDepth matches of a query with
// more (rankBroad), as ranked does, found as walk and newest find them;
// poolIndexed is pool for a query whose matches are few enough to be all
// found through the search index first (see fewMatches).
//
// score is the SQL of a hit's score, ts_rank of the whole query when "";
// match, when not "", is the SQL of a tsquery (constants only) that
// selects the messages instead of q's terms (rankBroad's rare terms).
func searchStatements(q loom.SearchQuery, terms []loom.Term, score, match string) (st searchSQL, ok bool) {
	// A filter PostgreSQL cannot hold matches nothing it stores.
	if !storable(q.UserID, q.SessionID, q.ProjectID, q.Surface, q.Role) {
		return st, false
	}
	c := query.New(dialect)
	var tsq string
	switch {
	case match != "":
		tsq = match
	case q.Raw:
		if strings.TrimSpace(q.Text) == "" {
			return st, false
		}
		tsq = c.SQL("to_tsquery('english', ?::text)", clean(q.Text))
	default:
		expr, args, ok := matchExpr(terms, q.AnyWord)
		if !ok {
			return st, false
		}
		tsq = c.SQL(expr, args...)
	}
	tsq = "(" + tsq + ")"
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	c.Search(q)
	if score == "" {
		score = "ts_rank(c.search, " + tsq + ", 1)"
	}
	text := fmt.Sprintf("substr(b.content, 1, %d)", snippet.MaxText+1)
	// Score: ts_rank with normalisation 1 (divided by 1 + the log of the
	// length). Like bm25 it favours messages that say the terms often and
	// tempers long ones. It is computed for the matches that pass the
	// filters only. Of each returned message, only the start that a
	// snippet needs is read (substr counts characters: MaxText+1 of them
	// are at least as many bytes, or the whole text). A query of stop
	// words only is an empty tsquery, which matches nothing.
	st.ranked = fmt.Sprintf(`WITH c AS MATERIALIZED (
			SELECT b.id, b.search FROM bodies b WHERE numnode(%[1]s) > 0 AND b.search @@ %[1]s
		), n AS MATERIALIZED (
			SELECT count(*) AS n FROM (SELECT FROM c LIMIT %[2]d) x
		)
		SELECT n.n, h.session_id, h.id, h.seq, h.role, h.created_at, h.score, h.title, h.key, %[3]s, h.body_id
		FROM n
		LEFT JOIN LATERAL (
			SELECT m.session_id, m.id, m.seq, m.role, m.created_at, c.id AS body_id,
				%[8]s AS score, s.title, coalesce(s.key, '') AS key
			FROM (SELECT * FROM c LIMIT %[4]d) c
			%[5]s
			WHERE n.n <= %[4]d AND %[6]s
			ORDER BY score DESC, m.created_at DESC, m.session_id, m.seq
			LIMIT %[7]d
		) h ON true
		LEFT JOIN bodies b ON b.id = h.body_id
		ORDER BY h.score DESC, h.created_at DESC, h.session_id, h.seq`,
		tsq, RankDepth+1, text, RankDepth, lookup, c.String(), limit, score)
	st.walk = fmt.Sprintf(`SELECT m.session_id, m.id, m.seq, m.role, m.created_at, c.id, s.title, coalesce(s.key, ''), substr(c.content, 1, %[6]d)
		FROM (
			SELECT b.id, b.content FROM bodies b
			WHERE numnode(%[1]s) > 0 AND b.search @@ %[1]s
			ORDER BY b.id DESC
			LIMIT %[2]d
		) c
		%[3]s
		WHERE %[4]s
		ORDER BY c.id DESC, m.created_at DESC, m.session_id, m.seq
		LIMIT %[5]d`, tsq, ScanDepth, lookup, c.String(), limit, snippet.MaxText+1)
	st.newest = fmt.Sprintf(`SELECT m.session_id, m.id, m.seq, m.role, m.created_at, b.id, s.title, coalesce(s.key, ''), %[3]s
		FROM bodies b
		JOIN session_messages m ON m.body_id = b.id
		JOIN sessions s ON s.id = m.session_id
		WHERE numnode(%[1]s) > 0 AND b.search @@ %[1]s AND %[2]s
		ORDER BY b.id DESC, m.created_at DESC, m.session_id, m.seq
		LIMIT %[4]d`, tsq, c.String(), text, limit)
	// The pool: its newest RankDepth matches, ranked, in the shape of
	// ranked (the count is theirs).
	pool := `SELECT count(*) OVER (), p.session_id, p.id, p.seq, p.role, p.created_at, p.score, p.title, p.key, %[1]s, p.body_id
		FROM (%[2]s) p JOIN bodies b ON b.id = p.body_id
		ORDER BY p.score DESC, p.body_id DESC, p.created_at DESC, p.session_id, p.seq
		LIMIT %[3]d`
	cols := `m.session_id, m.id, m.seq, m.role, m.created_at, c.id AS body_id, ` + score + ` AS score, s.title, coalesce(s.key, '') AS key`
	newestMatches := fmt.Sprintf(`SELECT %[1]s
		FROM (
			SELECT b.id, b.search FROM {matches}
			ORDER BY b.id DESC
			LIMIT %[3]d
		) c
		%[4]s
		WHERE %[5]s
		ORDER BY c.id DESC, m.created_at DESC, m.session_id, m.seq
		LIMIT %[6]d`, cols, tsq, ScanDepth, lookup, c.String(), RankDepth)
	matches := fmt.Sprintf(`bodies b WHERE numnode(%[1]s) > 0 AND b.search @@ %[1]s`, tsq)
	// Put in with Replace, not Sprintf: what was formatted into
	// newestMatches is not read for verbs again.
	st.pool = fmt.Sprintf(pool, text, strings.Replace(newestMatches, "{matches}", matches, 1), limit)
	// The same, its matches all found through the search index first
	// (OFFSET 0 keeps the planner from walking the table back instead),
	// for a query known to have few (fewMatches).
	st.poolIndexed = fmt.Sprintf(pool, text, strings.Replace(newestMatches, "{matches}", "(SELECT b.id, b.search FROM "+matches+" OFFSET 0) b", 1), limit)
	st.poolNewest = fmt.Sprintf(pool, text, fmt.Sprintf(`SELECT %[1]s
		FROM bodies c
		JOIN session_messages m ON m.body_id = c.id
		JOIN sessions s ON s.id = m.session_id
		WHERE numnode(%[2]s) > 0 AND c.search @@ %[2]s AND %[3]s
		ORDER BY c.id DESC, m.created_at DESC, m.session_id, m.seq
		LIMIT %[4]d`, cols, tsq, c.String(), RankDepth), limit)
	st.args, st.limit = c.Args, limit
	return st, true
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

// IndexSize is how many message bodies the full-text index holds at
// most: the largest body id, read from the end of its primary key.
func (s *Store) IndexSize(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM bodies`).Scan(&n); err != nil {
		return 0, fmt.Errorf("size the search index: %w", err)
	}
	return n, nil
}

// NamedSessions implements sqlstore.Namer in one statement: the
// messages holding name, found through the search index, counted to
// depth+1; when there are at most depth, their sessions, with q's
// filters, each with the share of its messages that hold it. The matches
// are joined to their sessions (lookup): joined the other way, the
// planner walked every message of the user's sessions (7 s at a million
// messages).
func (s *Store) NamedSessions(ctx context.Context, q loom.SearchQuery, name loom.Term, depth int) (int64, []sqlstore.Share, error) {
	stmt, args := namedSQL(q, name, depth)
	var n int64
	held, err := rowscan.All(ctx, rowsOf{s.pool}, func(r rowscan.Scanner) (sqlstore.Share, error) {
		var h sqlstore.Share
		err := r.Scan(&n, &h.Session, &h.Share)
		return h, err
	}, stmt, args...)
	if err != nil {
		return 0, nil, fmt.Errorf("search: weigh a name: %w", err)
	}
	return n, held, nil
}

// namedSQL is the statement of NamedSessions and its arguments: no row
// when no session passes the filters or more than depth messages hold
// the name.
func namedSQL(q loom.SearchQuery, name loom.Term, depth int) (string, []any) {
	c := query.New(dialect)
	tsq := c.SQL("plainto_tsquery('english', ?::text)", strings.Join(name.Words, " "))
	c.Search(q)
	return fmt.Sprintf(`WITH c AS MATERIALIZED (SELECT b.id FROM bodies b WHERE b.search @@ %[1]s LIMIT %[2]d)
		SELECT (SELECT count(*) FROM c), m.session_id, count(*)::float8 / greatest(max(s.message_count), 1) FROM c %[3]s
		WHERE (SELECT count(*) FROM c) <= %[4]d AND %[5]s GROUP BY m.session_id`, tsq, depth+1, lookup, depth, c.String()), c.Args
}

// NameRank implements sqlstore.Namer: ts_rank (normalization 1) gives
// a word said once in a message of n words about 0.06/(1+ln n) times
// the weight rarity gives it: 0.01 at a hundred words, as an agent's
// reply, 0.015 at twenty, a line of chat.
func (s *Store) NameRank() float64 { return 0.01 }
