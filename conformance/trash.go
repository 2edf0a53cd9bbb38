package conformance

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// §3.8: rename, describe, move; delete to trash and restore; purge; prune
// skips locked sessions and has a dry run.
func testLifecycle(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s, turnMessages(1)...)
	child := newSession("alice", "")
	child.Kind, child.ParentID = loom.KindSubagent, s.ID
	mustAppend(t, st, child, text(loom.RoleUser, "sub task"), text(loom.RoleAssistant, "sub answer"))
	title, desc := "Implement OAuth", "the login work"
	got, err := st.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Title: &title, Description: &desc})
	if err != nil || got.Title != title || got.Description != desc {
		t.Fatalf("rename = %+v, %v", got, err)
	}
	moved := loom.Project{ID: "1111222233334444", Name: "api2", Root: "/new/api2"}
	got, err = st.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Project: &moved})
	if err != nil || got.Project != moved {
		t.Fatalf("move = %+v, %v", got, err)
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", ProjectID: moved.ID}); len(l) != 1 {
		t.Fatalf("moved session not listed in its new project")
	}
	trashAndRestore(t, st, s, child, title, moved)
	purgeFamily(t, st, s, child)

	pruneOld(t, st, open)
}

// trashAndRestore: a session deleted to the trash, with its child, is gone
// from list, search and resolve; its key is free meanwhile; restore brings
// it back.
func trashAndRestore(t *testing.T, st loom.Store, s, child *loom.Session, title string, moved loom.Project) {
	// Delete to trash: gone from list, search and resolve, with its child.
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"}); len(l) != 0 {
		t.Fatalf("trashed sessions still listed: %d", len(l))
	}
	trash, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", Deleted: true})
	if len(trash) != 2 {
		t.Fatalf("trash holds %d sessions, want 2", len(trash))
	}
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "sub answer", UserID: "alice"}); len(hits) != 0 {
		t.Fatalf("trashed child searchable")
	}
	_, err := st.Resolve(ctx(t), title, loom.ResolveScope{UserID: "alice"})
	wantCode(t, err, loom.ENOTFOUND)
	r, err := st.Resolve(ctx(t), title, loom.ResolveScope{UserID: "alice", Deleted: true})
	if err != nil || r.ID != s.ID {
		t.Fatalf("resolve in trash = %v", err)
	}
	// The key is free while the session is in the trash.
	again := newSession("alice", "cli:api")
	again.Project = moved
	mustAppend(t, st, again, text(loom.RoleUser, "new one"))
	wantCode(t, st.Restore(ctx(t), s.ID), loom.ECONFLICT)
	if _, err := st.Delete(ctx(t), again.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if err := st.Restore(ctx(t), s.ID); err != nil {
		t.Fatal(err)
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"}); len(l) != 2 {
		t.Fatalf("after restore %d sessions listed, want 2", len(l))
	}
	if msgs := mustMessages(t, st, child.ID, loom.MessageQuery{}); len(msgs) != 2 {
		t.Fatalf("restored child has %d messages", len(msgs))
	}
	wantCode(t, st.Restore(ctx(t), s.ID), loom.EINVALID)
}

func purgeFamily(t *testing.T, st loom.Store, s, child *loom.Session) {
	// Purge removes everything, children included.
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{s.ID, child.ID} {
		if _, err := st.Session(ctx(t), id); loom.ErrorCode(err) != loom.ENOTFOUND {
			t.Fatalf("purged session %s still there: %v", id, err)
		}
		if msgs := mustMessages(t, st, id, loom.MessageQuery{}); len(msgs) != 0 {
			t.Fatalf("purged session %s kept %d messages", id, len(msgs))
		}
	}
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "question", UserID: "alice"}); len(hits) != 0 {
		t.Fatalf("purged messages still searchable: %+v", hits)
	}
	wantCode(t, errOf(st.Delete(ctx(t), s.ID, loom.DeleteOptions{})), loom.ENOTFOUND)
}

func pruneOld(t *testing.T, st loom.Store, open Opener) {
	// Prune: old sessions go, locked ones stay, dry run changes nothing.
	// The age is worked out at each call from when the old sessions were
	// written, so that a slow machine cannot make the fresh one old.
	old1, old2, fresh := newSession("alice", "cli:o1"), newSession("alice", "cli:o2"), newSession("alice", "cli:f")
	mustAppend(t, st, old1, text(loom.RoleUser, "old one"))
	mustAppend(t, st, old2, text(loom.RoleUser, "old two"))
	written := time.Now()
	age := func() time.Duration { return time.Since(written) - 100*time.Millisecond }
	// Another handle holds old2.
	other := open(t)
	lease, err := other.Lock(ctx(t), old2.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx(t))
	time.Sleep(200*time.Millisecond - time.Since(written))
	mustAppend(t, st, fresh, text(loom.RoleUser, "fresh"))
	dry, err := st.Prune(ctx(t), loom.PruneOptions{UserID: "alice", OlderThan: age(), DryRun: true})
	if err != nil || len(dry.Removed) != 1 || dry.Removed[0].ID != old1.ID || len(dry.Skipped) != 1 || dry.Skipped[0].ID != old2.ID {
		t.Fatalf("dry run = %+v, %v", dry, err)
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"}); len(l) != 3 {
		t.Fatalf("dry run removed sessions: %d left", len(l))
	}
	res, err := st.Prune(ctx(t), loom.PruneOptions{UserID: "alice", OlderThan: age()})
	if err != nil || len(res.Removed) != 1 {
		t.Fatalf("prune = %+v, %v", res, err)
	}
	l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"})
	if len(l) != 2 {
		t.Fatalf("after prune %d sessions, want 2", len(l))
	}
	if err := st.Restore(ctx(t), old1.ID); err != nil {
		t.Fatalf("pruned session not restorable: %v", err)
	}
	// Age zero is every session, the one written a moment ago too: a dry
	// run lists them all (the held one as skipped), and changes nothing.
	mustAppend(t, st, fresh, text(loom.RoleUser, "written just now"))
	all, err := st.Prune(ctx(t), loom.PruneOptions{UserID: "alice", DryRun: true})
	if err != nil {
		t.Fatalf("dry run at age zero: %v", err)
	}
	listed := map[string]bool{}
	for _, x := range append(all.Removed, all.Skipped...) {
		listed[x.ID] = true
	}
	live, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"})
	if len(all.Skipped) != 1 || all.Skipped[0].ID != old2.ID || len(listed) != len(live) || !listed[fresh.ID] || !listed[old1.ID] {
		t.Fatalf("dry run at age zero = %d removed, %d skipped of %d live sessions", len(all.Removed), len(all.Skipped), len(live))
	}
	if again, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"}); len(again) != len(live) {
		t.Fatal("dry run at age zero removed sessions")
	}
	_, err = st.Prune(ctx(t), loom.PruneOptions{UserID: "alice", OlderThan: -time.Second, DryRun: true})
	wantCode(t, err, loom.EINVALID)
}

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

	deleteHeld(t, st, other, family, live)
	deleteChildHeld(t, st, other, orphan, family, live)
	deleteOwnLock(t, st, other, family)
}

func deleteHeld(t *testing.T, st, other loom.Store, family func(string) (*loom.Session, *loom.Session), live func(string) bool) {
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
		if !errors.As(err, &le) || le.Holder == nil || le.Holder.PID != lease.Lock().PID || le.Holder.Host != lease.Lock().Host ||
			!strings.Contains(err.Error(), fmt.Sprintf("process %d on %s", lease.Lock().PID, lease.Lock().Host)) {
			t.Fatalf("delete of a held session (purge %v): %v; want it to name process %d on %s", purge, err, lease.Lock().PID, lease.Lock().Host)
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
}

func deleteChildHeld(t *testing.T, st, other loom.Store, orphan Orphan, family func(string) (*loom.Session, *loom.Session), live func(string) bool) {
	// A lock on a sub-agent session holds its parent too.
	s, child := family("child held")
	lease, err := other.Lock(ctx(t), child.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, errOf(st.Delete(ctx(t), s.ID, loom.DeleteOptions{Purge: true})), loom.ELOCKED)
	if !live(s.ID) || !live(child.ID) {
		t.Fatal("a refused delete changed the sessions")
	}
	// A lock whose holder died blocks nothing.
	orphan(t, other, child.ID)
	gone, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{Purge: true})
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
}

func deleteOwnLock(t *testing.T, st, other loom.Store, family func(string) (*loom.Session, *loom.Session)) {
	// The handle that holds the lock may delete its own session, and a
	// released lock holds nothing.
	s, _ := family("mine")
	mine, err := st.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{}); err != nil {
		t.Fatalf("delete by the lock's holder: %v", err)
	}
	mine.Release(ctx(t))
	s, _ = family("released")
	lease, err := other.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	lease.Release(ctx(t))
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{}); err != nil {
		t.Fatalf("delete after release: %v", err)
	}
}
