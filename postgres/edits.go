package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

var (
	_ loom.EditStore     = (*Store)(nil)
	_ loom.EditVersioner = (*Store)(nil)
)

// UnindexedEdits implements loom.EditStore.
func (s *Store) UnindexedEdits(ctx context.Context, n int) ([]loom.EditSource, error) {
	rows, err := s.pool.Query(ctx, `SELECT p.body_id, p.mark, b.parts::text, coalesce((
			SELECT se.cwd FROM messages m
			JOIN spans sp ON sp.store_id = m.session_id AND m.seq BETWEEN sp.first_seq AND sp.last_seq
			JOIN sessions se ON se.id = sp.session_id
			WHERE m.body_id = p.body_id ORDER BY se.created_at, se.id LIMIT 1), '')
		FROM edits_pending p JOIN bodies b ON b.id = p.body_id ORDER BY p.body_id LIMIT $1`, n)
	if err != nil {
		return nil, serverError(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (loom.EditSource, error) {
		var e loom.EditSource
		var parts string
		err := r.Scan(&e.Body, &e.Mark, &parts, &e.Cwd)
		e.Parts = []byte(parts)
		return e, err
	})
}

// PutEdits implements loom.EditStore.
func (s *Store) PutEdits(ctx context.Context, done []loom.EditSource, edits []loom.IndexedEdit) error {
	return s.withTx(ctx, func(tx pgx.Tx) error {
		kept := map[int64]bool{}
		for _, d := range done {
			tag, err := tx.Exec(ctx, `DELETE FROM edits_pending WHERE body_id = $1 AND mark = $2`, d.Body, d.Mark)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				kept[d.Body] = true
				if _, err := tx.Exec(ctx, `DELETE FROM edits WHERE body_id = $1`, d.Body); err != nil {
					return err
				}
			}
		}
		var b pgx.Batch
		for _, e := range edits {
			if kept[e.Body] {
				b.Queue(`INSERT INTO edits (body_id, n, part_id, tool, op, path, from_path, lines)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (body_id, n) DO NOTHING`,
					e.Body, e.N, e.PartID, e.Tool, e.Op, e.Path, e.From, sqlstore.PackLines(e.Lines))
			}
		}
		if b.Len() == 0 {
			return nil
		}
		return tx.SendBatch(ctx, &b).Close()
	})
}

// Edits implements loom.EditStore.
func (s *Store) Edits(ctx context.Context, q loom.EditQuery) ([]loom.FileEdit, error) {
	n := 0
	param := func() string { n++; return "$" + strconv.Itoa(n) }
	where, args, err := sqlstore.EditFilter(q, func(v any) (string, any) {
		return "SELECT unnest(" + param() + "::text[])", v
	}, param)
	if err != nil {
		return nil, err
	}
	if q.Bare {
		m := 0
		param := func() string { m++; return "$" + strconv.Itoa(m) }
		where, args := sqlstore.BareEditFilter(q, func(v any) (string, any) {
			return "SELECT unnest(" + param() + "::text[])", v
		}, param)
		cols, scan := rowscan.BareEditColumns, rowscan.BareEdit
		if q.PathsOnly {
			cols, scan = `e.path`, rowscan.PathEdit
		}
		out, err := rowscan.All(ctx, rowsOf{s.pool}, scan, `SELECT `+cols+` FROM edits e WHERE `+where, args...)
		if err != nil {
			return nil, fmt.Errorf("edit index: %w", serverError(err))
		}
		return out, nil
	}
	parts := `''`
	if q.Parts {
		parts = `(SELECT b.parts::text FROM bodies b WHERE b.id = e.body_id)`
	}
	rows, err := s.pool.Query(ctx, `SELECT e.n, e.part_id, e.tool, e.op, e.path, e.from_path, e.lines,
			m.id, m.seq, m.turn, m.model, m.provider, m.created_at, se.id, se.source_tool, se.member, se.created_at, `+parts+`
		FROM edits e
		JOIN messages m ON m.body_id = e.body_id
		JOIN spans sp ON sp.store_id = m.session_id AND m.seq BETWEEN sp.first_seq AND sp.last_seq
		JOIN sessions se ON se.id = sp.session_id
		WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("edit index: %w", serverError(err))
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sqlstore.EditRow, error) {
		var row sqlstore.EditRow
		e := &row.Edit
		var lines []byte
		var ps string
		err := r.Scan(&e.N, &e.PartID, &e.Tool, &e.Op, &e.Path, &e.From, &lines,
			&e.MessageID, &e.Seq, &e.Turn, &e.Model, &e.Provider, &e.At, &e.SessionID, &e.Agent, &e.Member, &row.SessionCreated, &ps)
		e.Lines, e.At = sqlstore.UnpackLines(lines), e.At.UTC()
		if q.Parts {
			e.Parts = []byte(ps)
		}
		return row, err
	})
	if err != nil {
		return nil, fmt.Errorf("edit index: %w", serverError(err))
	}
	return sqlstore.OwnEdits(found), nil
}

// ProjectRoots implements loom.EditStore.
func (s *Store) ProjectRoots(ctx context.Context, userID, projectID string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT project_root FROM sessions
		WHERE user_id = $1 AND project_id = $2 AND deleted_at IS NULL AND project_root <> ''`, userID, projectID)
	if err != nil {
		return nil, fmt.Errorf("edit index: %w", serverError(err))
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) { return rowscan.String(r) })
}

// RecordedRoots implements loom.RootLister.
func (s *Store) RecordedRoots(ctx context.Context, userID string) ([]loom.RecordedRoot, error) {
	out, err := rowscan.All(ctx, rowsOf{s.pool}, rowscan.RecordedRoot, `SELECT `+rowscan.RecordedRootColumns+` FROM sessions
		WHERE user_id = $1 AND deleted_at IS NULL AND project_root <> '' GROUP BY project_root, project_id`, userID)
	if err != nil {
		return nil, fmt.Errorf("edit index: %w", serverError(err))
	}
	return out, nil
}

// EditVersion implements loom.EditVersioner: the number the triggers of
// migration 0017 set anew at each change blame's answer rests on.
func (s *Store) EditVersion(ctx context.Context) (string, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT n FROM edits_version WHERE id = 1`).Scan(&n); err != nil {
		return "", fmt.Errorf("edit index: version: %w", serverError(err))
	}
	return strconv.FormatInt(n, 36), nil
}
