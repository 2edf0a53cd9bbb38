package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

var (
	_ loom.EditStore     = (*Store)(nil)
	_ loom.EditVersioner = (*Store)(nil)
)

// putEditSQL and putEditRow write a row of the edit index (PutEdits, and
// an import, which writes many rows a statement).
const (
	putEditSQL = `INSERT OR REPLACE INTO edits (body_id, n, part_id, tool, op, path, from_path, lines) VALUES `
	putEditRow = `(?, ?, ?, ?, ?, ?, ?, ?)`
)

// UnindexedEdits implements loom.EditStore: the marked bodies, each with
// the working directory of the oldest session reading a message that
// holds it.
func (s *Store) UnindexedEdits(ctx context.Context, n int) ([]loom.EditSource, error) {
	rows, err := reads{s}.QueryContext(ctx, `SELECT p.body_id, p.mark, b.parts, coalesce((
			SELECT se.cwd FROM messages m
			JOIN spans sp ON sp.store_id = m.session_id AND m.seq BETWEEN sp.first_seq AND sp.last_seq
			JOIN sessions se ON se.id = sp.session_id
			WHERE m.body_id = p.body_id ORDER BY se.created_at, se.id LIMIT 1), '')
		FROM edits_pending p JOIN bodies b ON b.id = p.body_id ORDER BY p.body_id LIMIT ?`, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []loom.EditSource
	for rows.Next() {
		var e loom.EditSource
		if err := rows.Scan(&e.Body, &e.Mark, &e.Parts, &e.Cwd); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// PutEdits implements loom.EditStore. Its statements are prepared once
// a batch: parsing them again for each of hundreds of bodies cost the
// catch-up after a large import an eighth of its time.
func (s *Store) PutEdits(ctx context.Context, done []loom.EditSource, edits []loom.IndexedEdit) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		var stmts [3]*sql.Stmt
		for i, q := range []string{`DELETE FROM edits_pending WHERE body_id = ? AND mark = ?`, `DELETE FROM edits WHERE body_id = ?`,
			putEditSQL + putEditRow} {
			st, err := tx.PrepareContext(ctx, q)
			if err != nil {
				return err
			}
			defer st.Close()
			stmts[i] = st
		}
		unmark, clear, insert := stmts[0], stmts[1], stmts[2]
		kept := map[int64]bool{}
		for _, d := range done {
			res, err := unmark.ExecContext(ctx, d.Body, d.Mark)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				kept[d.Body] = true
				if _, err := clear.ExecContext(ctx, d.Body); err != nil {
					return err
				}
			}
		}
		for _, e := range edits {
			if !kept[e.Body] {
				continue
			}
			if _, err := insert.ExecContext(ctx, e.Body, e.N, e.PartID, e.Tool, e.Op, e.Path, e.From, sqlstore.PackLines(e.Lines)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Edits implements loom.EditStore.
func (s *Store) Edits(ctx context.Context, q loom.EditQuery) ([]loom.FileEdit, error) {
	where, args, err := sqlstore.EditFilter(q, func(v any) (string, any) {
		b, _ := json.Marshal(v)
		return `SELECT value FROM json_each(?)`, string(b)
	}, func() string { return "?" })
	if err != nil {
		return nil, err
	}
	if q.Bare {
		return s.bareEdits(ctx, q)
	}
	parts := `''`
	if q.Parts {
		parts = `(SELECT b.parts FROM bodies b WHERE b.id = e.body_id)`
	}
	// The edits first (CROSS JOIN keeps SQLite's planner to that
	// order): a user's sessions are many, the edits of some files few.
	rows, err := reads{s}.QueryContext(ctx, `SELECT e.body_id, e.n, e.part_id, e.tool, e.op, e.path, e.from_path, e.lines,
			m.id, m.seq, m.turn, m.model, m.provider, m.created_at, se.id, se.source_tool, se.member, se.created_at, `+parts+`
		FROM edits e
		CROSS JOIN messages m ON m.body_id = e.body_id
		CROSS JOIN spans sp ON sp.store_id = m.session_id AND m.seq BETWEEN sp.first_seq AND sp.last_seq
		CROSS JOIN sessions se ON se.id = sp.session_id
		WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("edit index: %w", err)
	}
	defer rows.Close()
	var found []sqlstore.EditRow
	for rows.Next() {
		var r sqlstore.EditRow
		var lines []byte
		var at, created rowscan.Time
		e := &r.Edit
		var body int64
		var ps sql.RawBytes
		if err := rows.Scan(&body, &e.N, &e.PartID, &e.Tool, &e.Op, &e.Path, &e.From, &lines,
			&e.MessageID, &e.Seq, &e.Turn, &e.Model, &e.Provider, &at, &e.SessionID, &e.Agent, &e.Member, &created, &ps); err != nil {
			return nil, fmt.Errorf("edit index: %w", err)
		}
		e.Lines, e.At, r.SessionCreated = sqlstore.UnpackLines(lines), at.T, created.T
		if q.Parts {
			e.Parts = append([]byte(nil), ps...)
		}
		found = append(found, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("edit index: %w", err)
	}
	return sqlstore.OwnEdits(found), nil
}

// ProjectRoots implements loom.EditStore.
func (s *Store) ProjectRoots(ctx context.Context, userID, projectID string) ([]string, error) {
	rows, err := reads{s}.QueryContext(ctx, `SELECT DISTINCT project_root FROM sessions
		WHERE user_id = ? AND project_id = ? AND deleted_at IS NULL AND project_root <> ''`, userID, projectID)
	if err != nil {
		return nil, fmt.Errorf("edit index: %w", err)
	}
	return rowscan.Collect(rows, rowscan.String)
}

// bareEdits is Edits with q.Bare.
func (s *Store) bareEdits(ctx context.Context, q loom.EditQuery) ([]loom.FileEdit, error) {
	cols, scan := rowscan.BareEditColumns, rowscan.BareEdit
	if q.PathsOnly {
		cols, scan = `e.path`, rowscan.PathEdit
	}
	if len(q.Dirs) > 0 && len(q.Paths) == 0 && q.Under == "" {
		// Each directory's range of the path index in turn: as the
		// condition of each (OR), SQLite gathers every row's id first
		// and reads them again, twice the time.
		b, _ := json.Marshal(q.Dirs)
		if q.PathsOnly {
			if out, ok, err := dirPaths(ctx, s, string(b)); ok || err != nil {
				return out, err
			}
		}
		out, err := rowscan.All(ctx, rowsOf{reads{s}}, scan, `SELECT `+cols+` FROM json_each(?) d
			CROSS JOIN edits e WHERE e.path >= rtrim(d.value, '/')||'/' AND e.path < rtrim(d.value, '/')||'0'`, string(b))
		if err != nil {
			return nil, fmt.Errorf("edit index: %w", err)
		}
		return out, nil
	}
	where, args := sqlstore.BareEditFilter(q, func(v any) (string, any) {
		b, _ := json.Marshal(v)
		return `SELECT value FROM json_each(?)`, string(b)
	}, func() string { return "?" })
	out, err := rowscan.All(ctx, rowsOf{reads{s}}, scan, `SELECT `+cols+` FROM edits e WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("edit index: %w", err)
	}
	return out, nil
}

// dirPaths are the paths of the edits below the directories of dirs (a
// JSON array), as one value of them joined by NULs: a first blame reads
// a thousand paths of other machines' roots, and a row each cost as
// much again as reading them.
func dirPaths(ctx context.Context, s *Store, dirs string) ([]loom.FileEdit, bool, error) {
	var joined sql.NullString
	var n int
	if err := (reads{s}).QueryRowContext(ctx, `SELECT group_concat(e.path, char(0)), count(*) FROM json_each(?) d
		CROSS JOIN edits e WHERE e.path >= rtrim(d.value, '/')||'/' AND e.path < rtrim(d.value, '/')||'0'`, dirs).Scan(&joined, &n); err != nil {
		return nil, false, fmt.Errorf("edit index: %w", err)
	}
	if n == 0 {
		return nil, true, nil
	}
	ps := strings.Split(joined.String, "\x00")
	if len(ps) != n {
		return nil, false, nil // a path holding a NUL: read them a row each
	}
	out := make([]loom.FileEdit, n)
	for i, p := range ps {
		out[i].Path = p
	}
	return out, true, nil
}

// RecordedRoots implements loom.RootLister.
func (s *Store) RecordedRoots(ctx context.Context, userID string) ([]loom.RecordedRoot, error) {
	out, err := rowscan.All(ctx, rowsOf{reads{s}}, rowscan.RecordedRoot, `SELECT `+rowscan.RecordedRootColumns+` FROM sessions
		WHERE user_id = ? AND deleted_at IS NULL AND project_root <> '' GROUP BY project_root, project_id`, userID)
	if err != nil {
		return nil, fmt.Errorf("edit index: %w", err)
	}
	return out, nil
}

// EditVersion implements loom.EditVersioner: the number the triggers of
// migration 0027 set anew at each change blame's answer rests on.
func (s *Store) EditVersion(ctx context.Context) (string, error) {
	var n int64
	if err := (reads{s}).QueryRowContext(ctx, `SELECT n FROM edits_version`).Scan(&n); err != nil {
		return "", fmt.Errorf("edit index: version: %w", err)
	}
	return strconv.FormatInt(n, 36), nil
}
