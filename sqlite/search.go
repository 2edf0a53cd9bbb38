package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/snippet"
)

// RankDepth is how many of a query's most recent matches are ranked when
// it matches more.
const RankDepth = 2000

// ScanDepth is how many of a query's newest matches in the whole store
// are looked through for those that pass its filters (the user's own,
// most often) before the rest are looked for from the user's messages.
const ScanDepth = 20000

// MatchExpr renders a user's parsed query as an FTS5 expression in which
// every term must appear: each word and each phrase becomes a quoted FTS5
// string, so nothing the user types is read as syntax; a prefix term is
// followed by *, and a term with alternatives is their OR in parentheses.
// It returns "" when the query has no words.
func MatchExpr(terms []loom.Term) string {
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		parts = append(parts, termExpr(t))
	}
	// FTS5 reads two strings side by side as AND, but not a string and a
	// parenthesis.
	return strings.Join(parts, " AND ")
}

// anyExpr is MatchExpr matching any term instead of every one: each of
// anyTerms, joined with OR.
func anyExpr(terms []loom.Term) string {
	var parts []string
	for _, t := range anyTerms(terms) {
		parts = append(parts, termExpr(t))
	}
	return strings.Join(parts, " OR ")
}

// anyTerms are the terms an any-word search matches any of: each word of
// a run of words, each phrase and each term with alternatives.
func anyTerms(terms []loom.Term) []loom.Term {
	var out []loom.Term
	for _, t := range terms {
		if len(t.Alts) > 0 || t.Phrase || t.Prefix {
			out = append(out, t)
			continue
		}
		for _, w := range t.Words {
			out = append(out, loom.Term{Words: []string{w}})
		}
	}
	return out
}

// termExpr renders one term as an FTS5 expression.
func termExpr(t loom.Term) string {
	if len(t.Alts) > 0 {
		alts := make([]string, len(t.Alts))
		for i, a := range t.Alts {
			alts[i] = termExpr(a)
		}
		return "(" + strings.Join(alts, " OR ") + ")"
	}
	e := `"` + strings.ReplaceAll(strings.Join(t.Words, " "), `"`, `""`) + `"`
	if t.Prefix {
		e += "*"
	}
	return e
}

// Search implements loom.Store, within the limits sqlstore.RunSearch sets.
func (s *Store) Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error) {
	return sqlstore.RunSearch(ctx, q, s.search, s)
}

// search runs q, whose text parses into terms. Ranking and filtering run
// first; snippets are made afterwards for the returned rows only, since
// making one costs far more than ranking a row.
func (s *Store) search(ctx context.Context, q loom.SearchQuery, terms []loom.Term) ([]loom.SearchHit, error) {
	if q.Titles {
		return s.searchTitles(ctx, q, terms)
	}
	expr := q.Text
	if q.AnyWord && !q.Raw {
		expr = anyExpr(terms)
	} else if !q.Raw {
		expr = MatchExpr(terms)
	} else if err := checkPrefixes(expr); err != nil {
		return nil, err
	}
	if strings.TrimSpace(expr) == "" {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	filters := query.New(dialect)
	filters.Search(q)
	where := "bodies_fts MATCH ? AND " + filters.String()
	args := append([]any{expr}, filters.Args...)
	// Ranking with bm25 first reads the whole posting list of every query
	// word, which for words found in most messages costs hundreds of
	// milliseconds whatever else is done. So matches are first walked
	// newest first, which stops early: a query with at most RankDepth
	// matches is ranked by bm25 (an any-word query's weighed by the share
	// of its terms each match holds, rankCoordinated); a broader one is
	// ranked by its rare words (rankBroad).
	from := ` FROM bodies_fts CROSS JOIN session_messages m ON m.body_id = bodies_fts.rowid
		CROSS JOIN sessions s ON s.id = m.session_id WHERE ` + where
	walk := `SELECT f.rowid AS id FROM (SELECT rowid FROM bodies_fts WHERE bodies_fts MATCH ? ORDER BY rowid DESC LIMIT ` +
		strconv.Itoa(ScanDepth) + `) f CROSS JOIN session_messages m ON m.body_id = f.rowid
		CROSS JOIN sessions s ON s.id = m.session_id WHERE ` + filters.String() + ` ORDER BY f.rowid DESC LIMIT ?`
	if q.SessionID != "" {
		// Within one session, start from its messages.
		from = ` FROM session_messages m JOIN bodies_fts ON bodies_fts.rowid = m.body_id
			JOIN sessions s ON s.id = m.session_id WHERE ` + where
		walk = `SELECT bodies_fts.rowid AS id` + from + ` ORDER BY bodies_fts.rowid DESC LIMIT ?`
	}
	// %s is the score; m.body_id is the full-text row (equal through the
	// join).
	const cols = `SELECT m.session_id, m.id, m.seq, m.role, m.created_at, %s, m.body_id, s.title, coalesce(s.key, '')`
	// want is how many of the newest matches to find: enough to tell
	// whether there are too many to rank, or, for the newest matches
	// only, the limit.
	want := RankDepth + 1
	if q.Newest {
		want = limit
	}
	// small is set when the scope holds fewer messages than want (a
	// small project of a large store): walking the newest matches
	// joined to their sessions would find too few, after reading
	// ScanDepth of them, so its matches are read as scopeNewest reads
	// them, first.
	small, err := s.smallScope(ctx, q, want)
	if err != nil {
		return nil, searchError(err, q.Raw)
	}
	var newest []int64
	if small {
		newest, err = s.scopeNewest(ctx, expr, filters, want)
	} else {
		newest, err = s.newest(ctx, walk, append(append([]any{}, args...), want)...)
	}
	if err != nil {
		return nil, searchError(err, q.Raw)
	}
	// filtered is set when the query's words are in more messages than
	// ScanDepth and its filters keep few of them (a project's, a
	// user's): newest then holds every match that passes them.
	filtered := false
	if q.SessionID == "" && len(newest) < want {
		// Few of the newest ScanDepth matches pass the filters. When the
		// query has more matches than those, they are walked again from
		// the user's own messages: walking everyone's matches to find a
		// user's few took seconds for a common word on a store shared by
		// many users.
		var n int
		row := reads{s}.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT rowid FROM bodies_fts WHERE bodies_fts MATCH ? ORDER BY rowid DESC LIMIT ?)`,
			expr, ScanDepth)
		if err := row.Scan(&n); err != nil {
			return nil, searchError(err, q.Raw)
		}
		if n == ScanDepth {
			filtered = true
			if q.UserID != "" {
				from = ` FROM sessions s CROSS JOIN session_messages m ON m.session_id = s.id
					CROSS JOIN bodies_fts ON bodies_fts.rowid = m.body_id WHERE ` + where
			}
			switch {
			case scopeByJoin:
				newest, err = s.newest(ctx, `SELECT bodies_fts.rowid AS id`+from+` ORDER BY bodies_fts.rowid DESC LIMIT ?`,
					append(append([]any{}, args...), want)...)
			case !small:
				newest, err = s.scopeNewest(ctx, expr, filters, want)
			}
			if err != nil {
				return nil, searchError(err, q.Raw)
			}
			if len(newest) > 0 && len(newest) <= RankDepth && !scopeByJoin {
				// Every match in the scope is in newest: the ranking
				// reads those, not each of the scope's messages.
				from = ` FROM bodies_fts CROSS JOIN session_messages m ON m.body_id = bodies_fts.rowid
					CROSS JOIN sessions s ON s.id = m.session_id WHERE bodies_fts.` + idList(newest) + ` AND ` + where
			}
		}
	}
	if len(newest) == 0 {
		return nil, nil
	}
	var rows *sql.Rows
	// broad holds the scores of a broad query's best matches, read
	// below without the full-text match.
	var broad map[int64]float64
	partial := false
	switch {
	case len(newest) <= RankDepth && !q.Newest && filtered && q.AnyWord && !q.Raw:
		// Every match that passes the filters is in newest, but the
		// query's words are in more messages than ScanDepth: bm25 over
		// them counts every message of each word, and joined to the
		// filters FTS5 counted them afresh for each message of the
		// project (seconds for a project's 600 messages of "others" in
		// a store of a million where 500,000 hold it). They are ranked
		// as a broad query's are, all of them, so the answer is exact.
		// (An every-word query's matches all hold every word, which
		// that ranking cannot tell apart: it is ranked by bm25 below.)
		var best []sqlstore.Scored
		if best, partial, err = s.rankBroad(ctx, q, terms, from, args, newest, limit, true); err != nil {
			return nil, searchError(err, q.Raw)
		}
		broad = scoresOf(best)
	case len(newest) <= RankDepth && !q.Newest && coordinating(q, terms):
		var best []sqlstore.Scored
		if best, err = s.rankCoordinated(ctx, coordTerms(terms), from, args, newest, limit); err != nil {
			return nil, searchError(err, q.Raw)
		}
		broad = scoresOf(best)
	case len(newest) <= RankDepth && !q.Newest:
		rows, err = reads{s}.QueryContext(ctx, fmt.Sprintf(cols, "-bodies_fts.rank")+from+`
			ORDER BY bodies_fts.rank, m.created_at DESC LIMIT ?`, append(args, limit)...)
	case q.Newest:
		// The newest matches, scored by recency (higher is newer) so
		// that scores still sort best first.
		broad = make(map[int64]float64, limit)
		for _, id := range newest[:min(limit, len(newest))] {
			broad[id] = float64(id) / float64(newest[0])
		}
	default:
		var best []sqlstore.Scored
		if best, partial, err = s.rankBroad(ctx, q, terms, from, args, newest, limit, false); err != nil {
			return nil, searchError(err, q.Raw)
		}
		broad = scoresOf(best)
	}
	if broad != nil {
		targs := slices.Clone(filters.Args)
		for id := range broad {
			targs = append(targs, id)
		}
		// The rows are known: read them without the full-text match,
		// and score them here.
		rows, err = reads{s}.QueryContext(ctx, fmt.Sprintf(cols, "0.0")+detailFrom+filters.String()+
			` AND m.body_id IN (`+inList(len(broad))+`) ORDER BY m.body_id DESC, m.created_at DESC`, targs...)
	}
	if err != nil {
		return nil, searchError(err, q.Raw)
	}
	var hits []loom.SearchHit
	var bodies []int64
	for rows.Next() {
		var h loom.SearchHit
		var created rowscan.Time
		var body int64
		if err := rows.Scan(&h.SessionID, &h.MessageID, &h.Seq, &h.Role, &created, &h.Score, &body, &h.SessionTitle, &h.SessionKey); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		h.CreatedAt = created.T
		if broad != nil {
			h.Score, h.Partial = broad[body], partial
		}
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
	if broad != nil {
		// Best first, a tie newest first, as ranked.
		order := make([]int, len(hits))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			if c := cmp.Compare(hits[b].Score, hits[a].Score); c != 0 {
				return c
			}
			return cmp.Compare(bodies[b], bodies[a])
		})
		sortedHits, sortedBodies := make([]loom.SearchHit, len(hits)), make([]int64, len(hits))
		for i, j := range order {
			sortedHits[i], sortedBodies[i] = hits[j], bodies[j]
		}
		hits, bodies = sortedHits, sortedBodies
	}
	kept := sqlstore.Kept(q, hits)
	keptHits, keptBodies := make([]loom.SearchHit, 0, len(kept)), make([]int64, 0, len(kept))
	for _, i := range kept {
		keptHits, keptBodies = append(keptHits, hits[i]), append(keptBodies, bodies[i])
	}
	return s.withSnippets(ctx, keptHits, keptBodies, q)
}

// scopeByJoin, set by a test only, walks a filtered search's matches
// and ranks them as before scopeNewest: joined to each of the scope's
// messages. The answers must be the same.
var scopeByJoin = false

// smallScope reports whether the sessions q keeps (a project's, a
// surface's) hold fewer than want messages, by their counts; a search
// in one session, or of a user's every session, is never small. It
// chooses how the matches are walked, not which are found.
func (s *Store) smallScope(ctx context.Context, q loom.SearchQuery, want int) (bool, error) {
	if q.SessionID != "" || (q.ProjectID == "" && q.Surface == "") || scopeByJoin {
		return false, nil
	}
	c := query.New(dialect)
	c.SearchSessions(q)
	var n int64
	err := reads{s}.QueryRowContext(ctx, `SELECT coalesce(sum(s.message_count), 0) FROM sessions s WHERE `+c.String(), c.Args...).Scan(&n)
	return n < int64(want), err
}

// scopeNewest returns the newest want matches of expr that pass
// filters, newest first, when few of the newest matches pass them (a
// small project of a large store). The scope's messages are read once,
// without the match, and the match's rowids are walked against them:
// joined the other way, FTS5 looked each of the scope's messages up in
// the index (a seek in each word's list of messages), which for a
// project of a few thousand messages took seconds where every
// project's search took milliseconds.
func (s *Store) scopeNewest(ctx context.Context, expr string, filters *query.Clause, want int) ([]int64, error) {
	return s.newest(ctx, `SELECT f.id FROM (SELECT rowid AS id FROM bodies_fts WHERE bodies_fts MATCH ? ORDER BY rowid DESC LIMIT -1 OFFSET 0) f
		WHERE f.id IN (SELECT m.body_id FROM sessions s CROSS JOIN session_messages m ON m.session_id = s.id WHERE `+filters.String()+`)
		ORDER BY f.id DESC LIMIT ?`, append(append([]any{expr}, filters.Args...), want)...)
}

// rankBroad ranks a query with more than RankDepth matches; newest are
// the newest RankDepth+1 of them that pass its filters, and from and
// args its full-text match joined to its messages and sessions and
// filtered (the match expression first). It returns the best limit of
// them, and whether they may not be the best of every match (see
// sqlstore.MergeBroad).
//
// Of an any-word query, the rare words (sqlstore.Selecting: the rarest,
// while the messages holding them are at most RankDepth) select the
// messages to rank: each is scored by bm25 over the rare words, plus the
// weight (bm25's inverse document frequency) of each common word it
// holds. FTS5 counts every message of a word before it can rank by it,
// and 200,000 messages of "think" took 60-130 ms to rank where
// selecting by "audrey" took under a millisecond. The newest RankDepth
// matches are scored by the common words they hold and ranked among
// them: a message of common words only may rank above one of a rare
// word, and when it could outrank the page without being among those
// newest, the answer is partial.
//
// An every-word query (and a raw one) with more than RankDepth matches
// has no rare word: each of its newest RankDepth matches holds every
// word, so they tie, newest first, and the answer is partial.
//
// whole says newest holds every match that passes the filters (at most
// RankDepth of them): each is ranked, the common words' look-ups only
// among them, and the answer is exact but for an every-word query's.
func (s *Store) rankBroad(ctx context.Context, q loom.SearchQuery, terms []loom.Term, from string, args []any, newest []int64, limit int, whole bool) ([]sqlstore.Scored, bool, error) {
	pool := newest[:min(len(newest), RankDepth)]
	inPool := make(map[int64]float64, len(pool))
	for _, id := range pool {
		inPool[id] = 0
	}
	if !q.AnyWord || q.Raw {
		// Every match holds every word: what would tell them apart (how
		// often, in how long a message) is not ranked.
		for id := range inPool {
			inPool[id] = 1
		}
		best, _ := sqlstore.MergeBroad(nil, scoredList(inPool), limit, 1)
		return best, true, nil
	}
	parts := anyTerms(terms)
	total, err := s.IndexSize(ctx)
	if err != nil {
		return nil, false, err
	}
	counts := make([]int64, len(parts))
	for i, p := range parts {
		row := reads{s}.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT rowid FROM bodies_fts WHERE bodies_fts MATCH ? LIMIT ?)`,
			termExpr(p), ScanDepth)
		if err := row.Scan(&counts[i]); err != nil {
			return nil, false, err
		}
	}
	sel := sqlstore.Selecting(counts, RankDepth)
	var rare []string
	for i, p := range parts {
		if sel[i] {
			rare = append(rare, termExpr(p))
		}
	}
	// coord says which parts count towards a message's share of the
	// terms it holds (sqlstore.Coordinated, as for a query with fewer
	// matches), held how many of them each ranked message holds.
	coord := map[string]bool{}
	for _, p := range coordTerms(terms) {
		coord[termExpr(p)] = true
	}
	heldSelected, heldPool := map[int64]int{}, map[int64]int{}
	// holding adds weight to the score of each message of scores that
	// matches expr (among the rowids among says), and counts part in held, when it
	// counts, as held by it.
	holding := func(expr string, part loom.Term, among string, weight float64, scores map[int64]float64, held map[int64]int) error {
		ids, err := s.newest(ctx, `SELECT rowid AS id FROM bodies_fts WHERE bodies_fts MATCH ? AND `+among, expr)
		counts := coord[termExpr(part)]
		for _, id := range ids {
			if _, ok := scores[id]; ok {
				scores[id] += weight
				if counts {
					held[id]++
				}
			}
		}
		return err
	}
	selected := map[int64]float64{}
	if len(rare) > 0 {
		rareExpr := "(" + strings.Join(rare, " OR ") + ")"
		stmt, sargs, among := `SELECT bodies_fts.rowid, -bodies_fts.rank`+from, append([]any{rareExpr}, args[1:]...), map[int64]float64(nil)
		if whole {
			// The rare words' own messages, at most RankDepth, in one
			// pass (joined to the filters, FTS5 would count them
			// afresh for each message), those in newest kept.
			stmt, sargs, among = `SELECT rowid, -rank FROM bodies_fts WHERE bodies_fts MATCH ?`, []any{rareExpr}, inPool
		}
		if selected, err = s.scored(ctx, stmt, sargs, among); err != nil {
			return nil, false, err
		}
		for i, p := range parts {
			if len(selected) == 0 {
				break
			}
			expr, weight := termExpr(p), 0.0
			if !sel[i] {
				// bm25 scored the rare words; a common one adds its
				// weight.
				expr, weight = rareExpr+" AND "+termExpr(p), sqlstore.IDF(total, counts[i])
			}
			if err := holding(expr, p, "rowid >= 0", weight, selected, heldSelected); err != nil {
				return nil, false, err
			}
		}
	}
	// The most a message of common words only scores.
	bound := 0.0
	for i, p := range parts {
		if !sel[i] {
			w := sqlstore.IDF(total, counts[i])
			bound += w
			among := "rowid >= " + strconv.FormatInt(pool[len(pool)-1], 10)
			if whole {
				among = idList(pool)
			}
			if err := holding(termExpr(p), p, among, w, inPool, heldPool); err != nil {
				return nil, false, err
			}
		}
	}
	// Weighed by the share of the terms held; the bound stays one, a
	// share being at most 1.
	if n := len(coord); n > 1 {
		for id, sc := range selected {
			selected[id] = sqlstore.Coordinated(sc, heldSelected[id], n)
		}
		for id, sc := range inPool {
			inPool[id] = sqlstore.Coordinated(sc, heldPool[id], n)
		}
	}
	best, partial := sqlstore.MergeBroad(scoredList(selected), scoredList(inPool), limit, bound)
	return best, partial && !whole, nil
}

// coordinating reports whether q's hits are weighed by the share of its
// terms each holds (sqlstore.Coordinated): an any-word query of more
// than one term that counts (coordTerms).
func coordinating(q loom.SearchQuery, terms []loom.Term) bool {
	return q.AnyWord && !q.Raw && len(coordTerms(terms)) > 1
}

// coordTerms are the terms of an any-word query whose share a message
// holds weighs its score: those of anyTerms that count
// (sqlstore.Counted).
func coordTerms(terms []loom.Term) []loom.Term {
	var out []loom.Term
	for _, t := range anyTerms(terms) {
		if sqlstore.Counted(t) {
			out = append(out, t)
		}
	}
	return out
}

// rankCoordinated ranks the matches of an any-word query of parts, all of
// them (newest, at most RankDepth), by bm25 weighed by the share of
// parts each holds (sqlstore.Coordinated), and returns the best limit.
// from and args are the query's full-text match joined to its messages
// and sessions and filtered. Which message holds which part is one
// look-up of each part within the matches' rowids: each holds at most as
// many messages as the whole query matched.
func (s *Store) rankCoordinated(ctx context.Context, parts []loom.Term, from string, args []any, newest []int64, limit int) ([]sqlstore.Scored, error) {
	scores, err := s.scored(ctx, `SELECT bodies_fts.rowid, -bodies_fts.rank`+from, args, nil)
	if err != nil {
		return nil, err
	}
	held, err := s.held(ctx, parts, rowidRange(newest), scores)
	if err != nil {
		return nil, err
	}
	list := make([]sqlstore.Scored, 0, len(scores))
	for id, sc := range scores {
		list = append(list, sqlstore.Scored{Body: id, Score: sqlstore.Coordinated(sc, held[id], len(parts))})
	}
	best, _ := sqlstore.MergeBroad(list, nil, limit, 0)
	return best, nil
}

// held counts, for each message of scores, how many of parts it holds,
// looking each part up among the rowids among says (rowidRange,
// idList).
func (s *Store) held(ctx context.Context, parts []loom.Term, among string, scores map[int64]float64) (map[int64]int, error) {
	held := make(map[int64]int, len(scores))
	for _, p := range parts {
		ids, err := s.newest(ctx, `SELECT rowid AS id FROM bodies_fts WHERE bodies_fts MATCH ? AND `+among, termExpr(p))
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if _, ok := scores[id]; ok {
				held[id]++
			}
		}
	}
	return held, nil
}

// scored reads the rows of stmt, each a rowid and a score, into a map
// by rowid: those that among holds, or all when among is nil.
func (s *Store) scored(ctx context.Context, stmt string, args []any, among map[int64]float64) (map[int64]float64, error) {
	rows, err := reads{s}.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]float64{}
	for rows.Next() {
		var id int64
		var score float64
		if err := rows.Scan(&id, &score); err != nil {
			return nil, err
		}
		if _, ok := among[id]; ok || among == nil {
			out[id] = score
		}
	}
	return out, rows.Err()
}

// scoresOf is best's scores by body.
func scoresOf(best []sqlstore.Scored) map[int64]float64 {
	out := make(map[int64]float64, len(best))
	for _, b := range best {
		out[b.Body] = b.Score
	}
	return out
}

// rowidRange is the condition on bodies_fts's rowid that holds the
// rowids of newest (newest first) and those between them.
func rowidRange(newest []int64) string {
	return "rowid >= " + strconv.FormatInt(newest[len(newest)-1], 10) + " AND rowid <= " + strconv.FormatInt(newest[0], 10)
}

// idList is the condition on bodies_fts's rowid that holds the rowids
// of ids and no other: FTS5 seeks each, where a range of rowids is read
// whole.
func idList(ids []int64) string {
	var b strings.Builder
	b.WriteString("rowid IN (")
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	b.WriteByte(')')
	return b.String()
}

// scoredList is scores as a list.
func scoredList(scores map[int64]float64) []sqlstore.Scored {
	out := make([]sqlstore.Scored, 0, len(scores))
	for id, sc := range scores {
		out = append(out, sqlstore.Scored{Body: id, Score: sc})
	}
	return out
}

// searchTitles matches session titles (loom.SearchQuery.Titles).
func (s *Store) searchTitles(ctx context.Context, q loom.SearchQuery, terms []loom.Term) ([]loom.SearchHit, error) {
	stmt, args, ok := query.TitleSQL(dialect, q, terms)
	if !ok {
		return nil, nil
	}
	rows, err := reads{s}.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("search titles: %w", err)
	}
	defer rows.Close()
	return query.TitleHits(rows, q, terms, func() (any, func() time.Time) {
		var t rowscan.Time
		return &t, func() time.Time { return t.T }
	})
}

// detailFrom reads the messages m of a broad search's newest matches,
// named by body (m.body_id IN …), with their sessions s, and is
// followed by the search's filters. CROSS JOIN starts from the
// messages: with a plain JOIN, a store without statistics (every store
// loom makes: it never runs ANALYZE) was read from the user's sessions
// instead, all of their messages, and three common words took over
// 800 ms on 600,000 messages instead of 11.
const detailFrom = ` FROM session_messages m CROSS JOIN sessions s ON s.id = m.session_id WHERE `

// newest runs query, which selects full-text rowids as id, and returns
// them newest first. They are gathered into one value so that the whole
// walk runs in the statement's first step: the driver interrupts a
// statement when its context ends only during that step, and a later
// step that skips many matches of other users would run to its end.
func (s *Store) newest(ctx context.Context, query string, args ...any) ([]int64, error) {
	var list string
	row := reads{s}.QueryRowContext(ctx, `SELECT coalesce(group_concat(id, ',' ORDER BY id DESC), '') FROM (`+query+`)`, args...)
	if err := row.Scan(&list); err != nil {
		return nil, err
	}
	if list == "" {
		return nil, nil
	}
	ids := make([]int64, 0, strings.Count(list, ",")+1)
	for f := range strings.SplitSeq(list, ",") {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("read matches: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// withSnippets gives each of hits, whose message's body is the same
// place of bodies, its snippet (snippets), and returns them; no hits
// read nothing and return nil.
func (s *Store) withSnippets(ctx context.Context, hits []loom.SearchHit, bodies []int64, q loom.SearchQuery) ([]loom.SearchHit, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	snippets, err := s.snippets(ctx, bodies, q)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Snippet = snippets[bodies[i]]
	}
	return hits, nil
}

// snippets cuts the returned messages' text around the query's words,
// from the start of each that package snippet needs (snippet.MaxText
// bytes), never the whole of a long message. It stops when ctx ends.
func (s *Store) snippets(ctx context.Context, bodies []int64, q loom.SearchQuery) (map[int64]string, error) {
	args := make([]any, 0, len(bodies)+1)
	args = append(args, snippet.MaxText+1)
	for _, b := range bodies {
		args = append(args, b)
	}
	// substr counts characters: MaxText+1 of them are at least as many
	// bytes, or the whole text.
	rows, err := reads{s}.QueryContext(ctx, `SELECT id, substr(content, 1, ?) FROM bodies WHERE id IN (`+inList(len(bodies))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	// The windows are read first and their snippets made together: a
	// gate (loom.SearchQuery.Gate) reads them all as one.
	var ids []int64
	var windows []snippet.Window
	for rows.Next() {
		var id int64
		var content string
		if err := rows.Scan(&id, &content); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		ids, windows = append(ids, id), append(windows, snippet.Prefix(content))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	start, end := q.Marks()
	out := make(map[int64]string, len(bodies))
	for i, sn := range snippet.ForQuery(q).MakeWindows(windows, start, end) {
		out[ids[i]] = sn
	}
	return out, nil
}

// MinPrefix is the fewest letters a prefix search (word*) in a raw query
// may have. FTS5 merges the posting lists of every word that starts with
// the prefix before it returns a first match, in one step that nothing
// interrupts; a one-letter prefix covers much of the index (a* took 1.4 s
// on a million messages).
const MinPrefix = 3

// checkPrefixes refuses a raw FTS5 query with a prefix search shorter
// than MinPrefix. A * outside a string ends a prefix search: of the word
// before it, or of the last word of the string it follows.
func checkPrefixes(raw string) error {
	quoted := false
	for i := 0; i < len(raw); i++ {
		switch {
		case raw[i] == '"':
			quoted = !quoted
		case raw[i] == '*' && !quoted:
			// Count the letters and digits that end what comes before,
			// up to MinPrefix of them.
			n := 0
			for b := strings.TrimSuffix(raw[:i], `"`); b != "" && n < MinPrefix; n++ {
				r, size := utf8.DecodeLastRuneInString(b)
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				b = b[:len(b)-size]
			}
			if n < MinPrefix {
				return loom.Errorf(loom.EINVALID, "search query: a prefix search (word*) needs at least %d letters", MinPrefix)
			}
		}
	}
	return nil
}

// searchError turns an error SQLite finds in the text of a raw query
// (FTS5 syntax, a column name that is not one) into an invalid input
// error; any other error stays internal.
func searchError(err error, raw bool) error {
	if raw && isSQLError(err) {
		return loom.Errorf(loom.EINVALID, "search query: %s", strings.TrimPrefix(err.Error(), "SQL logic error: "))
	}
	return fmt.Errorf("search: %w", err)
}

// IndexSize is how many message bodies the full-text index holds at
// most: the largest body id, read from the end of the table's key.
func (s *Store) IndexSize(ctx context.Context) (int64, error) {
	var n int64
	if err := (reads{s}).QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM bodies`).Scan(&n); err != nil {
		return 0, fmt.Errorf("size the search index: %w", err)
	}
	return n, nil
}

// NamedSessions implements sqlstore.Namer in one statement: the
// messages holding name, read from the full-text index to depth+1 of
// them, counted, and when there are at most depth, their sessions that
// pass q's filters, each with the share of its messages that hold it.
// No row says none passes, or more than depth hold it: no weight.
func (s *Store) NamedSessions(ctx context.Context, q loom.SearchQuery, name loom.Term, depth int) (int64, []sqlstore.Share, error) {
	filters := query.New(dialect)
	filters.Search(q)
	var n int64
	held, err := rowscan.All(ctx, rowsOf{reads{s}}, func(r rowscan.Scanner) (sqlstore.Share, error) {
		var h sqlstore.Share
		err := r.Scan(&n, &h.Session, &h.Share)
		return h, err
	}, `WITH f AS MATERIALIZED (SELECT rowid AS id FROM bodies_fts WHERE bodies_fts MATCH ? LIMIT ?)
		SELECT (SELECT count(*) FROM f), m.session_id, count(*) * 1.0 / max(max(s.message_count), 1)
		FROM f CROSS JOIN session_messages m ON m.body_id = f.id CROSS JOIN sessions s ON s.id = m.session_id
		WHERE (SELECT count(*) FROM f) <= ? AND `+filters.String()+` GROUP BY m.session_id`,
		append([]any{termExpr(name), depth + 1, depth}, filters.Args...)...)
	if err != nil {
		return 0, nil, fmt.Errorf("search: weigh a name: %w", err)
	}
	return n, held, nil
}

// NameRank implements sqlstore.Namer: bm25 gives a word said once in a
// message of average length its inverse document frequency.
func (s *Store) NameRank() float64 { return 1 }
