package sessionstore_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/memstore"
)

// A session deleted on one machine goes to the trash on the other, and
// a restore there brings it back on both; deleting it while the other
// machine, offline, was still adding turns to it leaves it out of the
// trash on both, whichever applies first, until a delete that had seen
// those turns.
func TestMemApplySyncTrashAndRestore(t *testing.T) {
	ctx := context.Background()
	for _, bFirst := range []bool{false, true} {
		a, b, c, s, ai, bi := syncedSession(t, bFirst)

		c.tick()
		if _, err := a.Delete(ctx, s.ID, loom.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		recs := pull(t, a, ai)
		ai, bi = exchange(t, a, b, ai, bi, bFirst)
		sameView(t, a, b)
		if !trashedOn(t, b, s.ID) {
			t.Fatalf("b first %v: the session is not in b's trash", bFirst)
		}
		v := viewOf(t, b)
		applyAll(t, b, recs)
		if !reflect.DeepEqual(viewOf(t, b), v) {
			t.Fatal("applying the trash again changed the store")
		}

		c.tick()
		if err := b.Restore(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		ai, bi = exchange(t, a, b, ai, bi, bFirst)
		sameView(t, a, b)
		if trashedOn(t, a, s.ID) {
			t.Fatalf("b first %v: the session b restored is in a's trash", bFirst)
		}

		// A deletes it while B, offline, adds turns.
		c.tick()
		if _, err := a.Delete(ctx, s.ID, loom.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		cur, _ := b.Session(ctx, s.ID)
		say(t, b, cur, loom.RoleAssistant, "hello")
		say(t, b, cur, loom.RoleUser, "still here")
		ai, bi = exchange(t, a, b, ai, bi, bFirst)
		sameView(t, a, b)
		if trashedOn(t, a, s.ID) || trashedOn(t, b, s.ID) {
			t.Fatalf("b first %v: a session trashed while the other machine worked in it is in the trash", bFirst)
		}

		// Having seen them, A deletes it again.
		c.tick()
		if _, err := a.Delete(ctx, s.ID, loom.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		exchange(t, a, b, ai, bi, bFirst)
		sameView(t, a, b)
		if !trashedOn(t, b, s.ID) {
			t.Fatalf("b first %v: the second delete did not trash the session on b", bFirst)
		}
	}
}

// A session purged on one machine while the other, offline, added turns
// to it is gone on both, and the machine whose turns they were saves a
// copy "T (recovered)" with them, which the other receives; the turns'
// own records, arriving after the purge, are dropped.
func TestMemApplySyncPurgeRescues(t *testing.T) {
	ctx := context.Background()
	for _, bFirst := range []bool{false, true} {
		a, b, c, s, ai, bi := syncedSession(t, bFirst)

		c.tick()
		if _, err := a.Delete(ctx, s.ID, loom.DeleteOptions{Purge: true}); err != nil {
			t.Fatal(err)
		}
		cur, _ := b.Session(ctx, s.ID)
		say(t, b, cur, loom.RoleAssistant, "a giraffe answer")
		ai, bi = exchange(t, a, b, ai, bi, bFirst)
		exchange(t, a, b, ai, bi, bFirst) // b's copy
		v := sameView(t, a, b)
		if len(v.Sessions) != 1 || v.Sessions[0].ID == s.ID || v.Sessions[0].Title != "plan (recovered)" {
			t.Fatalf("b first %v: sessions\n%s\nwant only the copy, plan (recovered)", bFirst, dumpSessions(v.Sessions))
		}
		if got := v.Messages[v.Sessions[0].ID]; len(got) != 2 || got[1].Text() != "a giraffe answer" {
			t.Fatalf("b first %v: the copy holds\n%s", bFirst, dumpMessages(got))
		}
	}
}

// A purge that had seen all of this machine's work saves no copy.
func TestMemApplySyncPurgeSeenNoCopy(t *testing.T) {
	ctx := context.Background()
	a, b, c, s, ai, bi := syncedSession(t, false)
	cur, _ := b.Session(ctx, s.ID)
	say(t, b, cur, loom.RoleAssistant, "a giraffe answer")
	ai, bi = exchange(t, a, b, ai, bi, false)
	c.tick()
	if _, err := a.Delete(ctx, s.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	exchange(t, a, b, ai, bi, false)
	for _, st := range []*memstore.Store{a, b} {
		if v := viewOf(t, st); len(v.Sessions) != 0 {
			t.Fatalf("after a purge that had seen everything:\n%s", dumpSessions(v.Sessions))
		}
	}
}
