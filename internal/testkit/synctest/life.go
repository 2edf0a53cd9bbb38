package synctest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// Forks, rewinds, the trash, restores and purges across machines.

// A fork made on one machine is the same fork on another: its row as
// made, reading its parent's messages up to where it was made, though the
// parent grew and changed since; a fork of a parent not here yet waits.
func testApplySyncForks(t *testing.T, newStore Factory) {
	ctx := context.Background()
	a, b, c := clockedPair(t, newStore)
	s := &loom.Session{UserID: "alice", Model: "sonnet"}
	Say(t, a, s, loom.RoleUser, "first zebra")
	Say(t, a, s, loom.RoleAssistant, "first answer")
	Say(t, a, s, loom.RoleUser, "second zebra")
	ai, bi := exchange(t, a, b, 0, 0, false)
	c.tick()
	fork, err := a.Fork(ctx, s.ID, loom.ForkOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.tick()
	model := "opus"
	if _, err := b.UpdateSession(ctx, s.ID, loom.SessionUpdate{Model: &model}); err != nil {
		t.Fatal(err)
	}
	cur, _ := b.Session(ctx, s.ID)
	Say(t, b, cur, loom.RoleAssistant, "second answer")
	exchange(t, a, b, ai, bi, true)
	v := SameView(t, a, b, "zebra")
	if len(v.Messages[fork.ID]) != 2 || len(v.Messages[s.ID]) != 4 {
		t.Fatalf("the fork holds %d messages and its parent %d; want 2 and 4", len(v.Messages[fork.ID]), len(v.Messages[s.ID]))
	}
	f, _ := b.Session(ctx, fork.ID)
	if f.Model != "sonnet" || f.ParentID != s.ID || f.Kind != loom.KindFork {
		t.Fatalf("fork on b: model %q, parent %s, kind %s", f.Model, f.ParentID, f.Kind)
	}

	var forked Pulled
	for _, r := range Pull(t, a, 0) {
		if r.Payload.Type() == synclog.TypeForked {
			forked = r
		}
	}
	orphan := *forked.Payload.(*synclog.Forked)
	row := *orphan.Session
	row.ID, row.ParentID = loom.NewID(), loom.NewID()
	orphan.Session = &row
	h := synclog.Header{Host: synclog.NewHostID(), Index: 1, HLC: forked.Header.HLC, KeyID: forked.Header.KeyID}
	if err := b.ApplySync(ctx, h, &orphan); !errors.Is(err, sessionstore.ErrWaits) {
		t.Fatalf("a fork of a session not here: %v, want sessionstore.ErrWaits", err)
	}
}

// A rewind made on one machine is the same rewind on another: the
// session keeps its first turns and writes on under the same store, the
// later turns are in a fork with the same id and title, and counters and
// usage split the same way; turns either machine adds after it follow on
// both.
func testApplySyncRewinds(t *testing.T, newStore Factory) {
	ctx := context.Background()
	a, b, c := clockedPair(t, newStore)
	s := &loom.Session{UserID: "alice", Title: "plan"}
	for i, text := range []string{"first zebra", "second zebra", "third zebra"} {
		c.tick()
		Say(t, a, s, loom.RoleUser, text)
		answer := &loom.Message{Role: loom.RoleAssistant, Usage: loom.Usage{InputTokens: 10 * int64(i+1), OutputTokens: int64(i + 1), APICalls: 1},
			Parts: []loom.Part{{Type: loom.PartText, Text: "answer " + text}}}
		if err := a.Append(ctx, s, answer); err != nil {
			t.Fatal(err)
		}
	}
	ai, bi := exchange(t, a, b, 0, 0, false)
	c.tick()
	fork, err := a.Rewind(ctx, s.ID, loom.RewindOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.tick()
	cur, _ := a.Session(ctx, s.ID)
	Say(t, a, cur, loom.RoleUser, "a new second giraffe")
	recs := Pull(t, a, ai)
	ApplyAll(t, b, recs)
	v := SameView(t, a, b, "zebra", "giraffe")
	if len(v.Messages[s.ID]) != 3 || len(v.Messages[fork.ID]) != 6 {
		t.Fatalf("the session holds %d messages and the fork %d; want 3 and 6", len(v.Messages[s.ID]), len(v.Messages[fork.ID]))
	}
	f, _ := b.Session(ctx, fork.ID)
	if f.Title != "plan (rewound)" || f.ParentID != s.ID || f.Usage.InputTokens != 50 {
		t.Fatalf("fork on b: title %q, parent %s, input tokens %d; want plan (rewound), %s, 50", f.Title, f.ParentID, f.Usage.InputTokens, s.ID)
	}
	ApplyAll(t, b, recs)
	if got := ViewOf(t, b, "zebra", "giraffe"); !reflect.DeepEqual(got, v) {
		t.Fatal("applying the records again changed the store")
	}

	// B writes on in the rewound session: A applies it where B wrote it.
	c.tick()
	cur, _ = b.Session(ctx, s.ID)
	Say(t, b, cur, loom.RoleAssistant, "a giraffe answer")
	exchange(t, a, b, ai+int64(len(recs)), bi, false)
	if v := SameView(t, a, b, "zebra", "giraffe"); len(v.Messages[s.ID]) != 4 {
		t.Fatalf("the session holds %d messages, want 4", len(v.Messages[s.ID]))
	}
}

// A session deleted on one machine goes to the trash on the other, and
// a restore there brings it back on both; deleting it while the other
// machine, offline, was still adding turns to it leaves it out of the
// trash on both, whichever applies first, until a delete that had seen
// those turns.
func testApplySyncTrashAndRestore(t *testing.T, newStore Factory) {
	ctx := context.Background()
	for _, bFirst := range []bool{false, true} {
		a, b, c, s, ai, bi := syncedSession(t, newStore, bFirst)

		c.tick()
		if _, err := a.Delete(ctx, s.ID, loom.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		recs := Pull(t, a, ai)
		ai, bi = exchange(t, a, b, ai, bi, bFirst)
		SameView(t, a, b, "zebra")
		if !trashedOn(t, b, s.ID) {
			t.Fatalf("b first %v: the session is not in b's trash", bFirst)
		}
		v := ViewOf(t, b, "zebra")
		ApplyAll(t, b, recs)
		if !reflect.DeepEqual(ViewOf(t, b, "zebra"), v) {
			t.Fatal("applying the trash again changed the store")
		}

		c.tick()
		if err := b.Restore(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		ai, bi = exchange(t, a, b, ai, bi, bFirst)
		SameView(t, a, b, "zebra")
		if trashedOn(t, a, s.ID) {
			t.Fatalf("b first %v: the session b restored is in a's trash", bFirst)
		}

		// A deletes it while B, offline, adds turns.
		c.tick()
		if _, err := a.Delete(ctx, s.ID, loom.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		cur, _ := b.Session(ctx, s.ID)
		Say(t, b, cur, loom.RoleAssistant, "hello")
		Say(t, b, cur, loom.RoleUser, "still here")
		ai, bi = exchange(t, a, b, ai, bi, bFirst)
		SameView(t, a, b, "zebra")
		if trashedOn(t, a, s.ID) || trashedOn(t, b, s.ID) {
			t.Fatalf("b first %v: a session trashed while the other machine worked in it is in the trash", bFirst)
		}

		// Having seen them, A deletes it again.
		c.tick()
		if _, err := a.Delete(ctx, s.ID, loom.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		exchange(t, a, b, ai, bi, bFirst)
		SameView(t, a, b, "zebra")
		if !trashedOn(t, b, s.ID) {
			t.Fatalf("b first %v: the second delete did not trash the session on b", bFirst)
		}
	}
}

// A session purged on one machine while the other, offline, added turns
// to it is gone on both, and the machine whose turns they were saves a
// copy "T (recovered)" with them, which the other receives; the turns'
// own records, arriving after the purge, are dropped.
func testApplySyncPurgeRescues(t *testing.T, newStore Factory) {
	ctx := context.Background()
	for _, bFirst := range []bool{false, true} {
		s, v := purgeWhileChanged(t, newStore, bFirst, func(b Store, s *loom.Session) {
			cur, _ := b.Session(ctx, s.ID)
			Say(t, b, cur, loom.RoleAssistant, "a giraffe answer")
		}, "zebra", "giraffe")
		if len(v.Sessions) != 1 || v.Sessions[0].ID == s.ID || v.Sessions[0].Title != "plan (recovered)" {
			t.Fatalf("b first %v: sessions\n%s\nwant only the copy, plan (recovered)", bFirst, DumpSessions(v.Sessions))
		}
		if got := v.Messages[v.Sessions[0].ID]; len(got) != 2 || got[1].Text() != "a giraffe answer" {
			t.Fatalf("b first %v: the copy holds\n%s", bFirst, DumpMessages(got))
		}
	}
}

// purgeWhileChanged purges a synced session on machine a while machine
// b, not yet told, changes it with change; then the two sync twice (the
// second time for b's copy of it) and the view both hold, with words, is
// returned with the purged session.
func purgeWhileChanged(t *testing.T, newStore Factory, bFirst bool, change func(b Store, s *loom.Session), words ...string) (*loom.Session, View) {
	t.Helper()
	a, b, c, s, ai, bi := syncedSession(t, newStore, bFirst)
	c.tick()
	if _, err := a.Delete(context.Background(), s.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	change(b, s)
	ai, bi = exchange(t, a, b, ai, bi, bFirst)
	exchange(t, a, b, ai, bi, bFirst) // b's copy
	return s, SameView(t, a, b, words...)
}

// A change another machine made to a session before it heard of its
// purge (a rename) reaches a machine that applied the purge after it: it
// is dropped there, as every record of a purged session is, and the
// machine that made it saves the copy, renamed, which both then hold.
func testApplySyncPurgeDropsLaterChanges(t *testing.T, newStore Factory) {
	ctx := context.Background()
	for _, bFirst := range []bool{false, true} {
		s, v := purgeWhileChanged(t, newStore, bFirst, func(b Store, s *loom.Session) {
			title := "plan renamed on b"
			if _, err := b.UpdateSession(ctx, s.ID, loom.SessionUpdate{Title: &title}); err != nil {
				t.Fatal(err)
			}
		}, "zebra")
		if len(v.Sessions) != 1 || v.Sessions[0].ID == s.ID || v.Sessions[0].Title != "plan renamed on b (recovered)" {
			t.Fatalf("b first %v: sessions\n%s\nwant only the copy, plan renamed on b (recovered)", bFirst, DumpSessions(v.Sessions))
		}
	}
}

// A purge that had seen all of this machine's work saves no copy.
func testApplySyncPurgeSeenNoCopy(t *testing.T, newStore Factory) {
	ctx := context.Background()
	a, b, c, s, ai, bi := syncedSession(t, newStore, false)
	cur, _ := b.Session(ctx, s.ID)
	Say(t, b, cur, loom.RoleAssistant, "a giraffe answer")
	ai, bi = exchange(t, a, b, ai, bi, false)
	c.tick()
	if _, err := a.Delete(ctx, s.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	exchange(t, a, b, ai, bi, false)
	for _, st := range []Store{a, b} {
		if v := ViewOf(t, st); len(v.Sessions) != 0 {
			t.Fatalf("after a purge that had seen everything:\n%s", DumpSessions(v.Sessions))
		}
	}
}
