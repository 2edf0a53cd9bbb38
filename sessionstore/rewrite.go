package sessionstore

import (
	"context"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

// WriteMessage stores body as message seq of session id inside tx, so that
// no other session's history changes. A message the session inherits is
// copied, with its new parts, to where the session stores its own first
// (sqlstore.CopyOnWrite), and the row it read is dropped when no one reads it any
// more. A message of its own that other sessions read (forks made after
// it) is first copied as it is for each of them: a fork keeps the
// conversation as it was when it was made.
func WriteMessage(ctx context.Context, tx Tx, id string, seq int64, body sqlstore.Body) error {
	spans, err := tx.Spans(ctx, id)
	if err != nil {
		return err
	}
	sp, ok := sqlstore.SpanOf(spans, seq)
	if !ok {
		return loom.Errorf(loom.ENOTFOUND, "session %s has no message %d", id, seq)
	}
	own := sqlstore.OwnStore(spans)
	if sp.RowsOf != own {
		if err := tx.CopyRow(ctx, own, sp.RowsOf, seq, &body); err != nil {
			return err
		}
		if err := tx.WriteSpans(ctx, id, sqlstore.CopyOnWrite(spans, seq)); err != nil {
			return err
		}
		return tx.DropUnread(ctx, sp.RowsOf, seq)
	}
	readers, err := tx.Readers(ctx, own, seq, id)
	if err != nil {
		return err
	}
	for _, r := range readers {
		theirs, err := tx.Spans(ctx, r)
		if err != nil {
			return err
		}
		if err := tx.CopyRow(ctx, sqlstore.OwnStore(theirs), own, seq, nil); err != nil {
			return err
		}
		if err := tx.WriteSpans(ctx, r, sqlstore.CopyOnWrite(theirs, seq)); err != nil {
			return err
		}
	}
	return tx.Rewrite(ctx, own, seq, body)
}
