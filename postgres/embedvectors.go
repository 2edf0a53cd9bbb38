package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/snippet"
)

var _ loom.VectorStore = (*Store)(nil)

// vectorsLockSQL is the key of the advisory lock the process that
// embeds a store holds: one per schema, since advisory locks are the
// database's and each schema is a store of its own.
const vectorsLockSQL = `hashtextextended('loom vectors ' || current_schema(), 0)`

// UseVectorModel implements loom.VectorStore.
func (s *Store) UseVectorModel(ctx context.Context, model string) error {
	return s.withTx(ctx, func(tx pgx.Tx) error {
		var cur string
		if err := tx.QueryRow(ctx, `SELECT model FROM vector_state FOR UPDATE`).Scan(&cur); err != nil {
			return fmt.Errorf("vectors: %w", err)
		}
		if cur == model {
			// PostgreSQL hands out body ids before the transactions
			// that insert them commit, so a body can become visible
			// below the mark (an import committing after a later
			// append): each run looks at every body once again, from
			// the start, for those without a vector.
			_, err := tx.Exec(ctx, `UPDATE vector_state SET mark = 0 WHERE mark <> 0`)
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM vectors`); err != nil {
			return fmt.Errorf("vectors: %w", err)
		}
		_, err := tx.Exec(ctx, `UPDATE vector_state SET model = $1, mark = 0`, model)
		return err
	})
}

// ClaimVectors implements loom.VectorStore with an advisory lock held on
// a connection of its own: the server frees it when the process ends.
func (s *Store) ClaimVectors(ctx context.Context) (func(), bool, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return func() {}, false, serverError(err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+vectorsLockSQL+`)`).Scan(&ok); err != nil || !ok {
		if err != nil {
			// Cut short, the statement may still have taken the
			// lock, which a connection kept in the pool would hold:
			// closed, the connection frees it.
			conn.Conn().Close(context.WithoutCancel(ctx))
		}
		conn.Release()
		return func() {}, false, serverError(err)
	}
	return func() {
		conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+vectorsLockSQL+`)`)
		conn.Release()
	}, true, nil
}

// Unembedded implements loom.VectorStore.
func (s *Store) Unembedded(ctx context.Context, n, maxChars int) ([]loom.Chunk, int64, error) {
	return rowscan.Unembedded(ctx, s.pool.QueryRow(ctx, `SELECT `+rowscan.UnembeddedColumns+` FROM vector_state`), rowsOf{s.pool},
		`SELECT id, substr(content, 1, $1) FROM bodies b
		WHERE id > $2 AND content <> '' AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.body_id = b.id)
		ORDER BY id LIMIT $3`, n, maxChars)
}

// PutVectors implements loom.VectorStore.
func (s *Store) PutVectors(ctx context.Context, model string, upTo int64, vecs []loom.Vector) error {
	return s.withTx(ctx, func(tx pgx.Tx) error {
		var cur string
		if err := tx.QueryRow(ctx, `SELECT model FROM vector_state FOR UPDATE`).Scan(&cur); err != nil {
			return fmt.Errorf("vectors: %w", err)
		}
		if cur != model {
			return loom.Errorf(loom.EINVALID, "vectors: the store's vectors are now of model %q, not %q", cur, model)
		}
		ids := make([]int64, len(vecs))
		data := make([][]byte, len(vecs))
		for i, v := range vecs {
			ids[i], data[i] = v.ID, v.Data
		}
		if _, err := tx.Exec(ctx, `INSERT INTO vectors (body_id, vec)
			SELECT u.id, u.vec FROM unnest($1::bigint[], $2::bytea[]) AS u(id, vec)
			WHERE EXISTS (SELECT 1 FROM bodies WHERE id = u.id)
			ON CONFLICT (body_id) DO UPDATE SET vec = excluded.vec`, ids, data); err != nil {
			return fmt.Errorf("vectors: %w", err)
		}
		_, err := tx.Exec(ctx, `UPDATE vector_state SET mark = greatest(mark, $1)`, upTo)
		return err
	})
}

// Vectors implements loom.VectorStore.
func (s *Store) Vectors(ctx context.Context, fn func(loom.Vector) error) (string, error) {
	return rowscan.Vectors(ctx, s.pool.QueryRow(ctx, `SELECT model FROM vector_state`), rowsOf{s.pool}, fn)
}

// VectorHits implements loom.VectorStore.
func (s *Store) VectorHits(ctx context.Context, q loom.SearchQuery, ids []int64, scores []float64) ([]loom.SearchHit, error) {
	if len(ids) == 0 || !storable(q.UserID, q.SessionID, q.ProjectID, q.Surface, q.Role) {
		return nil, nil
	}
	c := query.New(dialect)
	in := c.SQL("?::bigint[]", ids)
	c.Search(q)
	rows, err := s.pool.Query(ctx, fmt.Sprintf(`SELECT m.session_id, m.id, m.seq, m.role, m.created_at, c.id, s.title, coalesce(s.key, ''), substr(c.content, 1, %d)
		FROM (SELECT b.id, b.content FROM bodies b WHERE b.id = ANY(%s)) c
		%s
		WHERE %s`, snippet.MaxText+1, in, lookup, c.String()), c.Args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	byBody := map[int64][]loom.SearchHit{}
	texts := map[int64]string{}
	for rows.Next() {
		var h loom.SearchHit
		var body int64
		var text string
		if err := rows.Scan(&h.SessionID, &h.MessageID, &h.Seq, &h.Role, &h.CreatedAt, &body, &h.SessionTitle, &h.SessionKey, &text); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		h.CreatedAt = utc(h.CreatedAt)
		byBody[body] = append(byBody[body], h)
		texts[body] = text
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	hits, bodies := sqlstore.VectorOrder(ids, scores, byBody, q.Limit)
	start, end := q.Marks()
	windows := make([]snippet.Window, len(hits))
	for i := range hits {
		windows[i] = snippet.Prefix(texts[bodies[i]])
	}
	for i, sn := range snippet.ForQuery(q).MakeWindows(windows, start, end) {
		hits[i].Snippet = sn
	}
	return hits, nil
}

// VectorStatus implements loom.VectorStore.
func (s *Store) VectorStatus(ctx context.Context) (loom.VectorStatus, error) {
	var st loom.VectorStatus
	err := s.pool.QueryRow(ctx, `SELECT model, (SELECT count(*) FROM vectors),
		(SELECT count(*) FROM bodies b WHERE content <> '' AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.body_id = b.id))
		FROM vector_state`).Scan(&st.Model, &st.Vectors, &st.Pending)
	if err != nil {
		return st, fmt.Errorf("vectors: %w", err)
	}
	return st, nil
}
