package sessionstore

import (
	"context"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore"
)

// BodySteps are the reads and writes of messages where sessions read
// them: a session's spans say which store's rows it reads, and a
// message's body (its parts and search text) may be shared by rows.
type BodySteps interface {
	// Message returns message seq of session id as the session reads it,
	// nil when it has none.
	Message(ctx context.Context, id string, seq int64) (*loom.Message, error)
	// LastTurn hands r session id's messages newest first, until r.Add
	// returns false.
	LastTurn(ctx context.Context, id string, r *Repair) error
	// EncodeBody returns how the engine stores m's parts and search text.
	EncodeBody(m *loom.Message) (sqlstore.Body, error)
	// Spans returns the spans of session id.
	Spans(ctx context.Context, id string) ([]span.Span, error)
	// WriteSpans replaces the spans of session id.
	WriteSpans(ctx context.Context, id string, spans []span.Span) error
	// Readers returns the sessions other than id whose spans read row
	// seq of store.
	Readers(ctx context.Context, store string, seq int64, id string) ([]string, error)
	// CopyRow copies row seq of store from to store to: with body as a
	// body of its own, or sharing the row's body when body is nil.
	CopyRow(ctx context.Context, to, from string, seq int64, body *sqlstore.Body) error
	// DropUnread deletes row seq of store if no span reads it any more.
	DropUnread(ctx context.Context, store string, seq int64) error
	// Rewrite stores body in row seq of store, its session's own,
	// copying first a body another row shares.
	Rewrite(ctx context.Context, store string, seq int64, body sqlstore.Body) error
}

// writeMessage stores body as message seq of session id inside tx, so that
// no other session's history changes. A message the session inherits is
// copied, with its new parts, to where the session stores its own first
// (span.CopyOnWrite), and the row it read is dropped when no one reads it any
// more. A message of its own that other sessions read (forks made after
// it) is first copied as it is for each of them: a fork keeps the
// conversation as it was when it was made.
func writeMessage(ctx context.Context, tx BodySteps, id string, seq int64, body sqlstore.Body) error {
	spans, err := tx.Spans(ctx, id)
	if err != nil {
		return err
	}
	sp, ok := span.Of(spans, seq)
	if !ok {
		return loom.Errorf(loom.ENOTFOUND, "session %s has no message %d", id, seq)
	}
	own := span.OwnStore(spans)
	if sp.RowsOf != own {
		if err := tx.CopyRow(ctx, own, sp.RowsOf, seq, &body); err != nil {
			return err
		}
		if err := tx.WriteSpans(ctx, id, span.CopyOnWrite(spans, seq)); err != nil {
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
		if err := tx.CopyRow(ctx, span.OwnStore(theirs), own, seq, nil); err != nil {
			return err
		}
		if err := tx.WriteSpans(ctx, r, span.CopyOnWrite(theirs, seq)); err != nil {
			return err
		}
	}
	return tx.Rewrite(ctx, own, seq, body)
}
