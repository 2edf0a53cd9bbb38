package conformance

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// §3.5: one writer per session; a second handle gets ELOCKED naming the
// holder; release frees it; readers never need the lock.
func testLocking(t *testing.T, open Opener) {
	a, b := open(t), open(t)
	s := newSession("alice", "cli:api")
	lease, err := a.Lock(ctx(t), s.ID) // before the session exists
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, a, s, text(loom.RoleUser, "mine"))
	_, err = b.Lock(ctx(t), s.ID)
	wantCode(t, err, loom.ELOCKED)
	var le *loom.Error
	if !errors.As(err, &le) || le.Holder == nil || le.Holder.PID != lease.Lock().PID || !strings.Contains(err.Error(), fmt.Sprint(lease.Lock().PID)) {
		t.Fatalf("locked error does not name the holder: %v", err)
	}
	// The other handle cannot write either.
	x := &loom.Session{ID: s.ID, UserID: "alice", MessageCount: 1}
	wantCode(t, b.Append(ctx(t), x, text(loom.RoleUser, "theirs")), loom.ELOCKED)
	// Reading needs no lock; the session shows who holds it.
	got, err := b.Session(ctx(t), s.ID)
	if err != nil || got.Lock == nil || got.Lock.PID != lease.Lock().PID || got.Lock.Host == "" {
		t.Fatalf("session lock = %+v, %v", got, err)
	}
	if msgs := mustMessages(t, b, s.ID, loom.MessageQuery{}); len(msgs) != 1 {
		t.Fatalf("reader sees %d messages", len(msgs))
	}
	if err := lease.Release(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx(t)); err != nil {
		t.Fatalf("second release: %v", err)
	}
	lb, err := b.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	defer lb.Release(ctx(t))
	mustAppend(t, b, x, text(loom.RoleUser, "theirs now"))
	got, _ = a.Session(ctx(t), s.ID)
	if got.MessageCount != 2 {
		t.Fatalf("message count = %d", got.MessageCount)
	}
	// Deleting a session another handle writes is refused; forced, it
	// happens between two whole messages and the writer's next append
	// finds the session gone.
	wantCode(t, errOf(a.Delete(ctx(t), s.ID, loom.DeleteOptions{})), loom.ELOCKED)
	if _, err := a.Delete(ctx(t), s.ID, loom.DeleteOptions{Force: true}); err != nil {
		t.Fatalf("forced delete of a locked session: %v", err)
	}
	wantCode(t, b.Append(ctx(t), x, text(loom.RoleUser, "after delete")), loom.ENOTFOUND)
}

// LeaseOpener opens a handle on one database whose locks last ttl
// without renewal (the engine's default, loom.LeaseTTL, when ttl is 0).
type LeaseOpener func(t *testing.T, ttl time.Duration) loom.Store

// RunLease checks that the lease of a lock is the handle's to choose: a
// lock lasts its handle's lease from when it is taken, the holder renews
// it while it holds it (every third of the lease), and releasing it
// frees the session for others.
func RunLease(t *testing.T, open LeaseOpener) {
	def := open(t, 0)
	id := loom.NewID()
	lease, err := def.Lock(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if got := lease.Lock().Expires.Sub(lease.Lock().Since); got != loom.LeaseTTL {
		t.Fatalf("default lease lasts %v, want %v", got, loom.LeaseTTL)
	}
	if err := lease.Release(ctx(t)); err != nil {
		t.Fatal(err)
	}

	const ttl = 900 * time.Millisecond
	short := open(t, ttl)
	s := newSession("alice", "cli:lease")
	lease, err = short.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := lease.Lock().Expires.Sub(lease.Lock().Since); got != ttl {
		t.Fatalf("lease lasts %v, want %v", got, ttl)
	}
	mustAppend(t, short, s, text(loom.RoleUser, "held"))
	first := lease.Lock().Expires
	deadline := time.Now().Add(10 * ttl)
	for {
		got, err := short.Session(ctx(t), s.ID)
		if err != nil || got.Lock == nil {
			t.Fatalf("session under lease = %+v, %v", got, err)
		}
		if got.Lock.Expires.After(first) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease was not renewed within %v: it expires at %v", 10*ttl, got.Lock.Expires)
		}
		time.Sleep(ttl / 9)
	}
	if err := lease.Err(); err != nil {
		t.Fatalf("renewal failed: %v", err)
	}
	other := open(t, 0)
	wantCode(t, errOf(other.Lock(ctx(t), s.ID)), loom.ELOCKED)
	if err := lease.Release(ctx(t)); err != nil {
		t.Fatal(err)
	}
	taken, err := other.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	taken.Release(ctx(t))
}
