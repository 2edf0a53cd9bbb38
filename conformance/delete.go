package conformance

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// §3.5 and §3.8: a session that another live process holds is not
// deleted unless forced; a lock whose holder is gone does not count; the
// check is the store's own, in the delete's transaction.
func testDeleteLocked(t *testing.T, open Opener, orphan Orphan) {
	st, other := open(t), open(t)
	family := func(title string) (*loom.Session, *loom.Session) {
		s := newSession("alice", "")
		s.Title = title
		mustAppend(t, st, s, turnMessages(1)...)
		child := newSession("alice", "")
		child.Kind, child.ParentID = loom.KindSubagent, s.ID
		mustAppend(t, st, child, text(loom.RoleUser, "sub task"))
		return s, child
	}
	live := func(id string) bool {
		t.Helper()
		x, err := st.Session(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		return x.DeletedAt == nil
	}

	// Another handle holds the session: refused, naming the holder, in
	// the trash and for good alike; nothing changes.
	s, child := family("held")
	lease, err := other.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, purge := range []bool{false, true} {
		_, err = st.Delete(ctx(t), s.ID, loom.DeleteOptions{Purge: purge})
		wantCode(t, err, loom.ELOCKED)
		var le *loom.Error
		if !errors.As(err, &le) || le.Holder == nil || le.Holder.PID != lease.Lock.PID || le.Holder.Host != lease.Lock.Host ||
			!strings.Contains(err.Error(), fmt.Sprintf("process %d on %s", lease.Lock.PID, lease.Lock.Host)) {
			t.Fatalf("delete of a held session (purge %v): %v; want it to name process %d on %s", purge, err, lease.Lock.PID, lease.Lock.Host)
		}
	}
	if !live(s.ID) || !live(child.ID) {
		t.Fatal("a refused delete changed the sessions")
	}
	// Forced, it goes, with its sub-agent session, and says so.
	gone, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{Force: true})
	if err != nil {
		t.Fatalf("forced delete: %v", err)
	}
	if len(gone) != 2 || gone[0].ID != s.ID || gone[1].ID != child.ID || gone[0].DeletedAt == nil || gone[1].DeletedAt == nil {
		t.Fatalf("forced delete returned %+v", gone)
	}
	if live(s.ID) || live(child.ID) {
		t.Fatal("forced delete left the sessions live")
	}
	lease.Release(ctx(t))

	// A lock on a sub-agent session holds its parent too.
	s, child = family("child held")
	lease, err = other.Lock(ctx(t), child.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, errOf(st.Delete(ctx(t), s.ID, loom.DeleteOptions{Purge: true})), loom.ELOCKED)
	if !live(s.ID) || !live(child.ID) {
		t.Fatal("a refused delete changed the sessions")
	}
	// A lock whose holder died blocks nothing.
	orphan(t, other, child.ID)
	gone, err = st.Delete(ctx(t), s.ID, loom.DeleteOptions{Purge: true})
	if err != nil {
		t.Fatalf("delete with a dead holder's lock: %v", err)
	}
	if len(gone) != 2 || gone[0].ID != s.ID || gone[0].DeletedAt != nil {
		t.Fatalf("purge returned %+v", gone)
	}
	if _, err := st.Session(ctx(t), child.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("purged sub-agent session: %v", err)
	}
	lease.Release(ctx(t))

	// The handle that holds the lock may delete its own session, and a
	// released lock holds nothing.
	s, _ = family("mine")
	mine, err := st.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{}); err != nil {
		t.Fatalf("delete by the lock's holder: %v", err)
	}
	mine.Release(ctx(t))
	s, _ = family("released")
	lease, err = other.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	lease.Release(ctx(t))
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{}); err != nil {
		t.Fatalf("delete after release: %v", err)
	}
}
