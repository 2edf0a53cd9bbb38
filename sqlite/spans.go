package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// spanFrom reads the messages m of session ?3 through its spans sp (see
// span.Span): each span's rows under its store, within seq ?1 to ?2.
// The bounds are folded into each span's range so that every span is
// one seek of the primary key. Ordered by sp.first_seq and then m.seq,
// the rows come in seq order without a sort (spans do not overlap), so
// a LIMIT stops early: newest-N reads one span when it has N messages,
// and one more for each ancestor it has to reach back into. The session
// is compared with CAST(? AS TEXT), here and in the other statements
// run on every append or read: once a store has statistics (ANALYZE,
// PRAGMA optimize), SQLite's planner looks at a bare ?'s value to
// estimate the rows of spans' primary key, and expires the prepared
// statement at each new binding, so that it is parsed again every
// time (the cast hides the value; the same index serves).
const spanFrom = ` FROM spans sp CROSS JOIN messages m ON m.session_id = sp.store_id
	AND m.seq BETWEEN max(sp.first_seq, ?) AND min(sp.last_seq, ?)
	JOIN bodies b ON b.id = m.body_id
	WHERE sp.session_id = CAST(? AS TEXT)`

const (
	spanOrder     = ` ORDER BY sp.first_seq, m.seq`
	spanOrderDesc = ` ORDER BY sp.first_seq DESC, m.seq DESC`
)

// ownStoreSQL is where a session stores its next messages: the store of
// its last span.
const ownStoreSQL = `SELECT store_id FROM spans WHERE session_id = CAST(? AS TEXT) ORDER BY first_seq DESC LIMIT 1`

// The statements of forks and rewinds, prepared once per store with the
// hot writes: parsing them cost more than running them.
const (
	readSpansSQL   = `SELECT first_seq, last_seq, store_id FROM spans WHERE session_id = CAST(? AS TEXT) ORDER BY first_seq`
	deleteSpansSQL = `DELETE FROM spans WHERE session_id = CAST(? AS TEXT)`
	insertSpanSQL  = `INSERT INTO spans (session_id, first_seq, last_seq, store_id) VALUES (?, ?, ?, ?)`
)

// spanQuery is the query of spanMessages: cond added to the conditions
// on messages m, newest first with desc, LIMIT ? with limit.
func spanQuery(cond string, desc, limit bool) string {
	q := `SELECT ` + packedMessageSelect + spanFrom + cond
	if desc {
		q += spanOrderDesc
	} else {
		q += spanOrder
	}
	if limit {
		q += ` LIMIT ?`
	}
	return q
}

// spanMessages reads messages lo to hi of session id, in seq order (or
// newest first with desc), with cond and its args added to the
// conditions on messages m, at most limit of them when limit > 0.
func spanMessages(ctx context.Context, db queryer, id string, lo, hi int64, cond string, desc bool, limit int, args ...any) ([]*loom.Message, error) {
	return spanMessagesOf(ctx, db, id, lo, hi, cond, desc, limit, false, args...)
}

// spanMessagesOf is spanMessages, salvaging what does not decode with
// salvage (see loom.MessageQuery.Salvage).
func spanMessagesOf(ctx context.Context, db queryer, id string, lo, hi int64, cond string, desc bool, limit int, salvage bool, args ...any) ([]*loom.Message, error) {
	all := append([]any{lo, hi, id}, args...)
	if limit > 0 {
		all = append(all, limit)
	}
	msgs, err := rowscan.All(ctx, rowsOf{db}, packedMessageOf(id, salvage), spanQuery(cond, desc, limit > 0), all...)
	if err != nil {
		return nil, fmt.Errorf("read messages of %s: %w", id, err)
	}
	return msgs, nil
}

// readSpans returns the spans of session id in order; none when it has
// no row.
func readSpans(ctx context.Context, db queryer, id string) ([]span.Span, error) {
	rows, err := db.QueryContext(ctx, readSpansSQL, id)
	if err != nil {
		return nil, fmt.Errorf("read spans of %s: %w", id, err)
	}
	defer rows.Close()
	var out []span.Span
	for rows.Next() {
		var sp span.Span
		if err := rows.Scan(&sp.First, &sp.Last, &sp.RowsOf); err != nil {
			return nil, fmt.Errorf("read spans of %s: %w", id, err)
		}
		out = append(out, sp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read spans of %s: %w", id, err)
	}
	return out, nil
}

// writeSpans replaces the spans of session id, which must exist: the
// spans of a live session are rewritten without deleting the rows they
// stop naming (see the spans_ad trigger), so the caller leaves no row
// unread.
func writeSpans(ctx context.Context, w writes, id string, spans []span.Span) error {
	if _, err := w.ExecContext(ctx, deleteSpansSQL, id); err != nil {
		return fmt.Errorf("write spans of %s: %w", id, err)
	}
	for _, sp := range spans {
		if _, err := w.ExecContext(ctx, insertSpanSQL, id, sp.First, sp.Last, sp.RowsOf); err != nil {
			return fmt.Errorf("write spans of %s: %w", id, err)
		}
	}
	return nil
}

// ownStore returns where session id stores its next messages: its own
// id unless it was rewound.
func ownStore(ctx context.Context, db queryer, id string) (string, error) {
	var store string
	err := db.QueryRowContext(ctx, ownStoreSQL, id).Scan(&store)
	if errors.Is(err, sql.ErrNoRows) {
		return id, nil
	}
	if err != nil {
		return "", fmt.Errorf("read spans of %s: %w", id, err)
	}
	return store, nil
}
