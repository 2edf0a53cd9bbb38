package loom

import (
	"context"
	"time"
)

// LeaseTTL is how long a lock stays trusted without renewal by a holder on
// another host, unless a store is told otherwise. Holders renew at a third
// of it.
const LeaseTTL = 30 * time.Second

// Lease is a held session lock (Store.Lock). It renews itself until
// Release.
type Lease interface {
	// Lock is the lock as it was taken: its holder's process and host,
	// and when its lease first expired.
	Lock() Lock
	// Err returns the last renewal error, nil while the lease is
	// healthy.
	Err() error
	// Release stops renewing and frees the lock. It is safe to call
	// twice.
	Release(ctx context.Context) error
}
