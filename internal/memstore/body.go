package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore"
)

// Spans implements sessionstore.BodySteps.
func (t *tx) Spans(ctx context.Context, id string) ([]span.Span, error) {
	return slices.Clone(t.st.spans[id]), nil
}

// WriteSpans implements sessionstore.BodySteps: the rows the old spans read are
// left as they are.
func (t *tx) WriteSpans(ctx context.Context, id string, spans []span.Span) error {
	t.st.spans[id] = slices.Clone(spans)
	return nil
}

// Readers implements sessionstore.BodySteps.
func (t *tx) Readers(ctx context.Context, store string, seq int64, id string) ([]string, error) {
	var out []string
	for sid, spans := range t.st.spans {
		if sid == id {
			continue
		}
		for _, sp := range spans {
			if sp.RowsOf == store && sp.First <= seq && seq <= sp.Last {
				out = append(out, sid)
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// CopyRow implements sessionstore.BodySteps.
func (t *tx) CopyRow(ctx context.Context, to, from string, seq int64, b *sqlstore.Body) error {
	r, ok := t.st.rows[from][seq]
	if !ok {
		return nil
	}
	if b != nil {
		r.body = t.st.newBody(*b)
	}
	return t.st.putRow(to, seq, r)
}

// DropUnread implements sessionstore.BodySteps.
func (t *tx) DropUnread(ctx context.Context, store string, seq int64) error {
	if _, ok := t.st.rows[store][seq]; !ok || t.st.read(store, seq) {
		return nil
	}
	rows := t.st.rows[store]
	delete(rows, seq)
	t.st.setRows(store, rows)
	return nil
}

// Rewrite implements sessionstore.BodySteps: a body another row shares is
// copied first.
func (t *tx) Rewrite(ctx context.Context, store string, seq int64, b sqlstore.Body) error {
	r, ok := t.st.rows[store][seq]
	if !ok {
		return fmt.Errorf("no message %d stored under %s", seq, store)
	}
	shared := false
	for s, rows := range t.st.rows {
		for q, o := range rows {
			if o.body == r.body && (s != store || q != seq) {
				shared = true
			}
		}
	}
	if !shared {
		t.st.bodies[r.body] = b
		return nil
	}
	r.body = t.st.newBody(b)
	t.st.setRow(store, seq, r)
	return nil
}
