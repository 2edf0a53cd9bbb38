package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

var _ loom.VectorStore = (*Store)(nil)

// UseVectorModel implements loom.VectorStore.
func (s *Store) UseVectorModel(ctx context.Context, model string) error {
	var cur string
	if err := (reads{s}).QueryRowContext(ctx, `SELECT model FROM vector_state`).Scan(&cur); err != nil {
		return fmt.Errorf("vectors: %w", err)
	}
	if cur == model {
		return nil
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM vectors`); err != nil {
			return fmt.Errorf("vectors: %w", err)
		}
		_, err := tx.ExecContext(ctx, `UPDATE vector_state SET model = ?, mark = 0`, model)
		return err
	})
}

// claimTTL is how long a claim to embed binds a process on another host
// that stops renewing it.
const claimTTL = 2 * time.Minute

// ClaimVectors implements loom.VectorStore: the claim is a row naming
// this store handle, which another handle takes over once its process
// is gone (on this host) or its lease ran out (from another host).
func (s *Store) ClaimVectors(ctx context.Context) (func(), bool, error) {
	ok := false
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		var l loom.Lock
		var until string
		if err := tx.QueryRowContext(ctx, `SELECT owner, owner_pid, owner_host, owner_until FROM vector_state`).
			Scan(&l.Owner, &l.PID, &l.Host, &until); err != nil {
			return err
		}
		l.Expires, _ = time.Parse(time.RFC3339Nano, until)
		if l.Owner != "" && s.holder.Foreign(&l, s.Now(), sqlstore.Alive) != nil {
			return nil
		}
		ok = true
		return s.renewClaim(ctx, tx)
	})
	if err != nil || !ok {
		return func() {}, false, err
	}
	release := func() {
		s.writer.ExecContext(context.WithoutCancel(ctx), `UPDATE vector_state SET owner = '', owner_pid = 0, owner_host = '', owner_until = '' WHERE owner = ?`, s.holder.Owner)
	}
	return release, true, nil
}

func (s *Store) renewClaim(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE vector_state SET owner = ?, owner_pid = ?, owner_host = ?, owner_until = ?`,
		s.holder.Owner, s.holder.PID, s.holder.Host, loom.FormatTime(s.Now().Add(claimTTL)))
	return err
}

// Unembedded implements loom.VectorStore. The highest body is read
// first: a body stored after it has a higher id (SQLite has one writer,
// and gives the next id), so the mark never passes a body the scan could
// not see.
func (s *Store) Unembedded(ctx context.Context, n, maxChars int) ([]loom.Chunk, int64, error) {
	return rowscan.Unembedded(ctx, (reads{s}).QueryRowContext(ctx, `SELECT `+rowscan.UnembeddedColumns+` FROM vector_state`), rowsOf{reads{s}},
		`SELECT id, substr(content, 1, ?) FROM bodies
		WHERE id > ? AND content <> '' AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.body_id = bodies.id)
		ORDER BY id LIMIT ?`, n, maxChars)
}

// PutVectors implements loom.VectorStore.
func (s *Store) PutVectors(ctx context.Context, model string, upTo int64, vecs []loom.Vector) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		var cur string
		if err := tx.QueryRowContext(ctx, `SELECT model FROM vector_state`).Scan(&cur); err != nil {
			return fmt.Errorf("vectors: %w", err)
		}
		if cur != model {
			return loom.Errorf(loom.EINVALID, "vectors: the store's vectors are now of model %q, not %q", cur, model)
		}
		st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO vectors (body_id, vec)
			SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM bodies WHERE id = ?1)`)
		if err != nil {
			return fmt.Errorf("vectors: %w", err)
		}
		defer st.Close()
		for _, v := range vecs {
			if _, err := st.ExecContext(ctx, v.ID, v.Data); err != nil {
				return fmt.Errorf("vectors: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE vector_state SET mark = max(mark, ?)`, upTo); err != nil {
			return fmt.Errorf("vectors: %w", err)
		}
		return s.renewClaim(ctx, tx)
	})
}

// Vectors implements loom.VectorStore.
func (s *Store) Vectors(ctx context.Context, fn func(loom.Vector) error) (string, error) {
	return rowscan.Vectors(ctx, reads{s}.QueryRowContext(ctx, `SELECT model FROM vector_state`), rowsOf{s.reader}, fn)
}

// VectorHits implements loom.VectorStore.
func (s *Store) VectorHits(ctx context.Context, q loom.SearchQuery, ids []int64, scores []float64) ([]loom.SearchHit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	filters := query.New(dialect)
	filters.Search(q)
	args := append([]any{}, filters.Args...)
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := reads{s}.QueryContext(ctx, `SELECT m.session_id, m.id, m.seq, m.role, m.created_at, m.body_id, s.title, coalesce(s.key, '')`+
		detailFrom+filters.String()+` AND m.body_id IN (`+inList(len(ids))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	byBody := map[int64][]loom.SearchHit{}
	for rows.Next() {
		var h loom.SearchHit
		var created rowscan.Time
		var body int64
		if err := rows.Scan(&h.SessionID, &h.MessageID, &h.Seq, &h.Role, &created, &body, &h.SessionTitle, &h.SessionKey); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		h.CreatedAt = created.T
		byBody[body] = append(byBody[body], h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	hits, bodies := sqlstore.VectorOrder(ids, scores, byBody, q.Limit)
	return s.withSnippets(ctx, hits, bodies, q)
}

// VectorStatus implements loom.VectorStore.
func (s *Store) VectorStatus(ctx context.Context) (loom.VectorStatus, error) {
	var st loom.VectorStatus
	err := reads{s}.QueryRowContext(ctx, `SELECT model, (SELECT count(*) FROM vectors),
		(SELECT count(*) FROM bodies b WHERE content <> '' AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.body_id = b.id))
		FROM vector_state`).Scan(&st.Model, &st.Vectors, &st.Pending)
	if err != nil {
		return st, fmt.Errorf("vectors: %w", err)
	}
	return st, nil
}
