package loom

import (
	"context"
	"sync"
	"time"
)

// LeaseTTL is how long a lock stays trusted without renewal by a holder on
// another host. Holders renew at a third of it.
const LeaseTTL = 30 * time.Second

// TrashTTL is how long deleted sessions stay restorable.
const TrashTTL = 7 * 24 * time.Hour

// Lease is a held session lock. It renews itself until Release.
type Lease struct {
	SessionID string
	Lock      Lock

	release  func(context.Context) error
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	mu       sync.Mutex
	renewErr error
}

// NewLease starts renewing a lock every interval with renew until Release,
// which calls release. Engines construct leases; users only release them.
func NewLease(sessionID string, l Lock, interval time.Duration, renew, release func(context.Context) error) *Lease {
	ls := &Lease{SessionID: sessionID, Lock: l, release: release, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(ls.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ls.stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), interval)
				err := renew(ctx)
				cancel()
				ls.mu.Lock()
				ls.renewErr = err
				ls.mu.Unlock()
			}
		}
	}()
	return ls
}

// Err returns the last renewal error, nil while the lease is healthy.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.renewErr
}

// Release stops renewing and frees the lock. It is safe to call twice.
func (l *Lease) Release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		err = l.release(ctx)
	})
	return err
}
