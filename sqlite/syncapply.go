package sqlite

import (
	"github.com/loomhq/loom/sessionstore"
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
