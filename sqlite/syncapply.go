package sqlite

import (
	"context"
	"database/sql"

	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// ErrSyncGap reports a record whose index is not the next one of its
// host (sessionstore.ErrGap).
var ErrSyncGap = sessionstore.ErrGap

// ErrSyncWaits reports a record that follows a change this store does
// not hold yet (sessionstore.ErrWaits, synclog.ErrWait).
var ErrSyncWaits = sessionstore.ErrWaits

// NotAppliedError reports a record of a kind this loom does not know
// (sessionstore.NotAppliedError).
type NotAppliedError = sessionstore.NotAppliedError

// ApplySync applies record p of another host, whose header is h, to the
// store, in one transaction, by the merge rules of docs/sync.md
// (sessionstore.Apply). It records nothing in the store's own sync log:
// applying is not a change of this host's. The store keeps the index of
// the last record it applied of each host: a record applied already
// changes nothing, and one that does not follow it is ErrSyncGap. A
// record stamped too far ahead of this machine's clock is
// synclog.ErrClockAhead.
func (s *Store) ApplySync(ctx context.Context, h synclog.Header, p synclog.Payload) error {
	return s.withTx(ctx, func(tx *sql.Tx) error { return sessionstore.Apply(ctx, syncTx{writes{s, tx}}, h, p) })
}
