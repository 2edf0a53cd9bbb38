package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// dialect is how PostgreSQL writes what the engines' shared clauses
// differ in.
var dialect = query.Dialect{
	Param: func(n int) string { return "$" + strconv.Itoa(n) },
	Time:  func(t time.Time) any { return ms(t) },
	Before: func(c *loom.Cursor) (string, []any) {
		return "(s.updated_at, s.id) < (?, ?)", []any{ms(c.UpdatedAt), c.ID}
	},
	Join:    "JOIN",
	Lateral: true,
	TitleIs: "lower(s.title) = lower(?)",
	Like:    "ILIKE",
	Hour:    `to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24')`,
	Quarter: "CAST(extract(minute FROM m.created_at) AS INTEGER) / 15",
	Match: func(text string) (query.Match, bool) {
		// A text a search would refuse matches sessions by their
		// title, key, description and last prompt only.
		terms, err := loom.ParseQuery(text)
		if err != nil {
			return query.Match{}, false
		}
		expr, args, ok := matchExpr(terms, false)
		return query.Match{
			From:   "bodies b JOIN session_messages m ON m.body_id = b.id",
			Cond:   "b.search @@ (" + expr + ")",
			Args:   args,
			Newest: "b.id DESC",
		}, ok
	},
}

func (s *Store) querySessions(ctx context.Context, db querier, where string, args ...any) ([]*loom.Session, error) {
	return s.querySessionsWith(ctx, db, `SELECT `+rowscan.SessionColumns+rowscan.SessionFrom+where, args...)
}

// querySessionsWith runs a whole query that selects rowscan.SessionColumns.
func (s *Store) querySessionsWith(ctx context.Context, db querier, query string, args ...any) ([]*loom.Session, error) {
	return rowscan.Sessions(ctx, rowsOf{db}, s.live, query, args...)
}

// Session implements loom.Store.
func (s *Store) Session(ctx context.Context, id string) (*loom.Session, error) {
	return s.sessionTx(ctx, s.pool, id, "")
}

// sessionTx reads one session; lock, when set, is a row-locking clause
// such as FOR SHARE OF s.
func (s *Store) sessionTx(ctx context.Context, db querier, id, lock string) (*loom.Session, error) {
	if !storable(id) {
		return nil, loom.NotFound(id)
	}
	switch x, err := rowscan.Session(db.QueryRow(ctx, `SELECT `+rowscan.SessionColumns+rowscan.SessionFrom+`WHERE s.id = $1 `+lock, id), s.live); {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, loom.NotFound(id)
	case err != nil:
		return nil, fmt.Errorf("read session %s: %w", id, err)
	default:
		return x, nil
	}
}

// Sessions implements loom.Store. A filter value PostgreSQL cannot hold
// matches nothing it stores.
func (s *Store) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	if !listable(f) {
		return nil, nil
	}
	q, args := query.Sessions(dialect, f)
	return s.querySessions(ctx, s.pool, q, args...)
}

// listable reports whether PostgreSQL can hold every value of filter f:
// one it cannot matches nothing it stores.
func listable(f loom.SessionFilter) bool {
	return storable(f.UserID, f.ProjectID, f.ProjectName, f.Surface, f.Key, f.ParentID, f.Kind, f.Text) && (f.Before == nil || storable(f.Before.ID))
}

// Summaries implements loom.Store, as Sessions does.
func (s *Store) Summaries(ctx context.Context, f loom.SessionFilter) ([]*loom.SessionSummary, error) {
	if !listable(f) {
		return nil, nil
	}
	q, args := query.Sessions(dialect, f)
	return rowscan.Summaries(ctx, rowsOf{s.pool}, `SELECT `+rowscan.SummaryColumns+` FROM sessions s `+q, args...)
}

// Resolve implements loom.Store with the order of loom.ResolveRef.
func (s *Store) Resolve(ctx context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error) {
	if strings.TrimSpace(ref) != "" && !storable(ref) {
		return nil, loom.NotFound(ref)
	}
	return loom.ResolveRef(ref, scope, func(by loom.RefLookup, v string) ([]*loom.Session, error) {
		q, args := query.Lookup(dialect, scope, by, v)
		return s.querySessions(ctx, s.pool, q, args...)
	})
}

// SessionForUpdate implements sessionstore.SessionSteps, locking the row.
func (w *writeTx) SessionForUpdate(ctx context.Context, id string) (*loom.Session, error) {
	return w.s.sessionTx(ctx, w.tx, id, "FOR UPDATE OF s")
}

// UpdateRow implements sessionstore.SessionSteps.
func (w *writeTx) UpdateRow(ctx context.Context, id string, u loom.SessionUpdate, now time.Time) error {
	cols := query.UpdateColumns(u, ms(now))
	if len(cols) == 0 {
		return nil
	}
	set, args := query.Set(dialect, cols)
	q := fmt.Sprintf(`UPDATE sessions SET %s WHERE id = $%d`, set, len(args)+1)
	if _, err := w.tx.Exec(ctx, q, append(args, id)...); err != nil {
		if isUnique(err) {
			return loom.Errorf(loom.ECONFLICT, "another session already has that key in that project")
		}
		return fmt.Errorf("update session %s: %w", id, err)
	}
	return nil
}
