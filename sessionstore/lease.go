package sessionstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/loomhq/loom"
)

// Holder is a store handle as the holder of session locks: an owner id
// of its own (two handles in one process hold locks apart, as two
// processes would), its process and its host.
type Holder struct {
	Owner string
	PID   int
	Host  string
}

// NewHolder returns the holder of a new store handle in this process.
func NewHolder() Holder {
	host, _ := os.Hostname()
	return Holder{Owner: loom.NewID(), PID: os.Getpid(), Host: host}
}

// Foreign returns l, a lock read from the store, when it binds h at now:
// another handle holds it, and that holder runs on h's host (alive says
// whether its process still runs) or, on another host, its lease has not
// expired. It returns nil when h may write: the lock is h's own, or its
// holder is gone.
func (h Holder) Foreign(l *loom.Lock, now time.Time, alive func(pid int) bool) *loom.Lock {
	if l == nil || l.Owner == h.Owner || !h.Live(l, now, alive) {
		return nil
	}
	return l
}

// Live reports whether l still binds anyone at now: it is h's own, or its
// holder runs on h's host and alive says its process runs, or (held from
// another host) its lease has not expired.
func (h Holder) Live(l *loom.Lock, now time.Time, alive func(pid int) bool) bool {
	switch {
	case l.Owner == h.Owner:
		return true
	case l.Host == h.Host:
		return alive(l.PID)
	}
	return now.Before(l.Expires)
}

// LockTx is the transaction in which an engine takes a session's lock
// (LockSteps.Take).
type LockTx interface {
	// CheckWriter fails with ELOCKED when another live process holds the
	// lock of session id; no other handle takes it until the
	// transaction ends.
	CheckWriter(ctx context.Context, id string) error
	// PutLock writes l as the lock of session id.
	PutLock(ctx context.Context, id string, l loom.Lock) error
}

// putLock writes l as the lock of session id inside tx, unless another
// live holder has it (ELOCKED): what LockSteps.Take does in every
// engine.
func putLock(ctx context.Context, tx LockTx, id string, l loom.Lock) error {
	if err := tx.CheckWriter(ctx, id); err != nil {
		return err
	}
	if err := tx.PutLock(ctx, id, l); err != nil {
		return fmt.Errorf("lock %s: %w", id, err)
	}
	return nil
}

// LockSteps are an engine's writes of a session's lock row.
type LockSteps struct {
	// Take writes l as the session's lock in one transaction, failing
	// with ELOCKED when another live holder has it.
	Take func(ctx context.Context, l loom.Lock) error
	// Extend moves the expiry of the holder's lock to expires; false
	// when the holder no longer has the lock.
	Extend func(ctx context.Context, expires time.Time) (bool, error)
	// Drop deletes the holder's lock.
	Drop func(ctx context.Context) error
}

// TakeLock takes the lock of a session for h with the engine's steps,
// trusted for ttl (LeaseTTL when 0 or less) and renewed every ttl/3 until
// the lease is released: what every engine's Store.Lock does.
func (h Holder) TakeLock(ctx context.Context, sessionID string, now func() time.Time, ttl time.Duration, steps LockSteps) (loom.Lease, error) {
	if sessionID == "" {
		return nil, loom.Errorf(loom.EINVALID, "lock needs a session id")
	}
	if ttl <= 0 {
		ttl = loom.LeaseTTL
	}
	at := now().UTC().Truncate(time.Millisecond)
	l := loom.Lock{Owner: h.Owner, PID: h.PID, Host: h.Host, Since: at, Expires: at.Add(ttl).Truncate(time.Millisecond)}
	if err := steps.Take(ctx, l); err != nil {
		return nil, err
	}
	renew := func(ctx context.Context) error {
		held, err := steps.Extend(ctx, now().Add(ttl).UTC().Truncate(time.Millisecond))
		switch {
		case err != nil:
			return fmt.Errorf("renew lock of %s: %w", sessionID, err)
		case !held:
			return loom.Errorf(loom.ELOCKED, "lock of session %s was lost", sessionID)
		}
		return nil
	}
	release := func(ctx context.Context) error {
		if err := steps.Drop(ctx); err != nil {
			return fmt.Errorf("unlock %s: %w", sessionID, err)
		}
		return nil
	}
	return newLease(sessionID, l, ttl/3, renew, release), nil
}

// Lease is a held session lock. It renews itself until Release.
type Lease struct {
	SessionID string
	lock      loom.Lock

	release  func(context.Context) error
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	mu       sync.Mutex
	renewErr error
}

// newLease starts renewing a lock every interval with renew until Release,
// which calls release. Engines construct leases; users only release them.
func newLease(sessionID string, l loom.Lock, interval time.Duration, renew, release func(context.Context) error) *Lease {
	ls := &Lease{SessionID: sessionID, lock: l, release: release, stop: make(chan struct{}), done: make(chan struct{})}
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

// Lock implements loom.Lease.
func (l *Lease) Lock() loom.Lock { return l.lock }

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

// sourceLockID is the lock row of userID's import of the source file
// path (Store.LockSource): a name that no session id can be, so that
// the source locks share the locks table with the sessions' without
// meeting them, and of one length whatever the path.
func sourceLockID(userID, path string) string {
	sum := sha256.Sum256([]byte(userID + "\x00" + path))
	return "import:" + hex.EncodeToString(sum[:16])
}
