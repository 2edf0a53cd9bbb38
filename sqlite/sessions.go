package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// dialect is how SQLite writes what the engines' shared clauses differ
// in. Times are RFC 3339 text, which sorts in time order within years
// 0000 to 9999: a bound beyond them is compared as the nearer end.
var dialect = query.Dialect{
	Param: func(int) string { return "?" },
	Equal: "CAST(? AS TEXT)",
	Time:  func(t time.Time) any { return loom.FormatTime(loom.ClampTime(t)) },
	Before: func(c *loom.Cursor) (string, []any) {
		t := loom.FormatTime(loom.ClampTime(c.UpdatedAt))
		return "(s.updated_at < ? OR (s.updated_at = ? AND s.id < ?))", []any{t, t, c.ID}
	},
	Join:    "CROSS JOIN",
	TitleIs: "s.title = ? COLLATE NOCASE",
	WordsIn: wordsInName,
	Hour:    "substr(m.created_at, 1, 13)",
	Quarter: "CAST(substr(m.created_at, 15, 2) AS INTEGER) / 15",
	Match: func(text string) (query.Match, bool) {
		// A text a search would refuse matches sessions by their
		// title, key, description and last prompt only.
		terms, err := loom.ParseQuery(text)
		if err != nil {
			return query.Match{}, false
		}
		expr := MatchExpr(terms)
		// CROSS JOIN keeps SQLite walking the index from its newest
		// entry, which stops at the limit.
		return query.Match{
			From:   "bodies_fts CROSS JOIN session_messages m ON m.body_id = bodies_fts.rowid",
			Cond:   "bodies_fts MATCH ?",
			Args:   []any{expr},
			Newest: "bodies_fts.rowid DESC",
		}, expr != ""
	},
}

// packedSessions selects rowscan.SessionColumns as one JSON array, and the
// cost beside it (see Packed).
var packedSessions = `SELECT ` + packedSessionSelect + rowscan.SessionFrom

// live reports whether a lock row still binds anyone.
func (s *Store) live(l *loom.Lock) bool { return s.holder.Live(l, s.Now(), sqlstore.Alive) }

func (s *Store) querySessions(ctx context.Context, db queryer, where string, args ...any) ([]*loom.Session, error) {
	return s.querySessionsWith(ctx, db, `SELECT `+rowscan.SessionColumns+rowscan.SessionFrom+where, args...)
}

// querySessionsWith runs a whole query that selects rowscan.SessionColumns.
func (s *Store) querySessionsWith(ctx context.Context, db queryer, query string, args ...any) ([]*loom.Session, error) {
	return rowscan.Sessions(ctx, rowsOf{db}, s.live, query, args...)
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Session implements loom.Store.
func (s *Store) Session(ctx context.Context, id string) (*loom.Session, error) {
	return s.sessionTx(ctx, reads{s}, id)
}

func (s *Store) sessionTx(ctx context.Context, db queryer, id string) (*loom.Session, error) {
	x, err := rowscan.Session(db.QueryRowContext(ctx, sessionByIDSQL, id), s.live)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, loom.NotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, err)
	}
	return x, nil
}

// Sessions implements loom.Store.
func (s *Store) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	q, args := query.Sessions(dialect, f)
	return scanPackedSessions(ctx, rowsOf{reads{s}}, s.live, packedSessions+q, args...)
}

// packedSummaries selects SummaryColumns as one JSON array.
var packedSummaries = `SELECT ` + packedSummarySelect + ` FROM sessions s `

// Summaries implements loom.Store.
func (s *Store) Summaries(ctx context.Context, f loom.SessionFilter) ([]*loom.SessionSummary, error) {
	q, args := query.Sessions(dialect, f)
	return scanPackedSummaries(ctx, rowsOf{reads{s}}, packedSummaries+q, args...)
}

// Resolve implements loom.Store with the order of loom.ResolveRef.
func (s *Store) Resolve(ctx context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error) {
	return loom.ResolveRef(ref, scope, func(by loom.RefLookup, v string) ([]*loom.Session, error) {
		q, args := query.Lookup(dialect, scope, by, v)
		return s.querySessions(ctx, reads{s}, q, args...)
	})
}

// SessionForUpdate implements sessionstore.SessionSteps: the transaction is
// immediate, and holds SQLite's one write lock.
func (w writes) SessionForUpdate(ctx context.Context, id string) (*loom.Session, error) {
	return w.s.sessionTx(ctx, w, id)
}

// UpdateRow implements sessionstore.SessionSteps.
func (w writes) UpdateRow(ctx context.Context, id string, u loom.SessionUpdate, now time.Time) error {
	cols := query.UpdateColumns(u, loom.FormatTime(now))
	if len(cols) == 0 {
		return nil
	}
	set, args := query.Set(dialect, cols)
	_, err := w.ExecContext(ctx, `UPDATE sessions SET `+set+` WHERE id = ?`, append(args, id)...)
	if isUnique(err) {
		return loom.Errorf(loom.ECONFLICT, "another session already has that key in that project")
	}
	if err != nil {
		return fmt.Errorf("update session %s: %w", id, err)
	}
	return nil
}

// inList is a list of n placeholders, for IN (…).
func inList(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
