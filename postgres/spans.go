package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// spanJoin reads the messages m of session $3 through its spans sp (see
// span.Span): each span's rows under its store, within seq $1 to $2. The
// bounds are folded into each span's range so that every span is one
// range of the primary key. %s is more conditions on m.
const spanJoin = ` FROM spans sp JOIN messages m ON m.session_id = sp.store_id
	AND m.seq BETWEEN greatest(sp.first_seq, $1) AND least(sp.last_seq, $2)%s
	JOIN bodies b ON b.id = m.body_id
	WHERE sp.session_id = $3`

// spanNewest reads the newest $n messages of session $3 within seq $1 to
// $2: at most $n of each span, each read backwards from its end, so the
// cost does not grow with the session, nor with its ancestors' when it is
// a fork. The second %s is the order, DESC (ASC reads the oldest $n).
const spanNewest = ` FROM spans sp CROSS JOIN LATERAL (SELECT * FROM messages m
		WHERE m.session_id = sp.store_id
		AND m.seq BETWEEN greatest(sp.first_seq, $1) AND least(sp.last_seq, $2)%s
		ORDER BY m.seq %s LIMIT %s) m
	JOIN bodies b ON b.id = m.body_id
	WHERE sp.session_id = $3`

// spanMessages reads messages lo to hi of session id, in seq order, or
// the newest limit of them, newest first, when limit > 0 (the oldest
// limit, in seq order, with oldest). cond (with its args as $4 on) adds
// conditions on messages m.
func spanMessages(ctx context.Context, db querier, id string, lo, hi int64, cond string, limit int, oldest bool, args ...any) ([]*loom.Message, error) {
	return spanMessagesOf(ctx, db, id, lo, hi, cond, limit, oldest, false, args...)
}

// spanMessagesOf is spanMessages, salvaging what does not decode with
// salvage (see loom.MessageQuery.Salvage).
func spanMessagesOf(ctx context.Context, db querier, id string, lo, hi int64, cond string, limit int, oldest, salvage bool, args ...any) ([]*loom.Message, error) {
	all := append([]any{lo, hi, id}, args...)
	var q string
	if limit > 0 {
		all = append(all, limit)
		n := fmt.Sprintf("$%d", len(all))
		order := "DESC"
		if oldest {
			order = "ASC"
		}
		q = `SELECT ` + rowscan.SpanMessageColumns + fmt.Sprintf(spanNewest, cond, order, n) + ` ORDER BY m.seq ` + order + ` LIMIT ` + n
	} else {
		q = `SELECT ` + rowscan.SpanMessageColumns + fmt.Sprintf(spanJoin, cond) + ` ORDER BY m.seq`
	}
	scan := rowscan.Message
	if salvage {
		scan = rowscan.Salvaged
	}
	msgs, err := rowscan.All(ctx, rowsOf{db}, scan, q, all...)
	if err != nil {
		return nil, fmt.Errorf("read messages of %s: %w", id, err)
	}
	return msgs, nil
}

// readSpans returns the spans of session id in order.
func readSpans(ctx context.Context, db querier, id string) ([]span.Span, error) {
	rows, err := db.Query(ctx, `SELECT first_seq, last_seq, store_id FROM spans WHERE session_id = $1 ORDER BY first_seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read spans of %s: %w", id, err)
	}
	spans, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (span.Span, error) {
		var sp span.Span
		err := r.Scan(&sp.First, &sp.Last, &sp.RowsOf)
		return sp, err
	})
	if err != nil {
		return nil, fmt.Errorf("read spans of %s: %w", id, err)
	}
	return spans, nil
}

// queueSpans queues the two statements that replace the spans of
// session id, which must exist: the spans of a live session are
// rewritten without deleting the rows they stop naming (see the spans_ad
// trigger), so the caller leaves no row unread.
func queueSpans(b *pgx.Batch, id string, spans []span.Span) {
	firsts := make([]int64, len(spans))
	lasts := make([]int64, len(spans))
	stores := make([]string, len(spans))
	for i, sp := range spans {
		firsts[i], lasts[i], stores[i] = sp.First, sp.Last, sp.RowsOf
	}
	b.Queue(`DELETE FROM spans WHERE session_id = $1`, id)
	b.Queue(`INSERT INTO spans (session_id, first_seq, last_seq, store_id)
		SELECT $1, f, l, s FROM unnest($2::bigint[], $3::bigint[], $4::text[]) AS u(f, l, s)`, id, firsts, lasts, stores)
}
