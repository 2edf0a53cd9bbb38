package synctest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// each continue a session offline. After they sync, both hold the
// session with the laptop's turns (its first message was stamped first)
// and a conflict fork "T (conflict)" with the desktop's, never the two
// interleaved, whichever applies first. Turns the desktop added before it
// Pulled join the fork; a fork the desktop made of its own turns follows
// them into the conflict fork; a rename of the session reaches the
// conflict fork as a conflict copy's title.
func testApplySyncConflictFork(t *testing.T, newStore Factory) {
	for _, desktopFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("desktop first %v", desktopFirst), func(t *testing.T) {
			ctx := context.Background()
			laptop, desktop, c := clockedPair(t, newStore)
			s := &loom.Session{UserID: "alice", Title: "plan"}
			Say(t, laptop, s, loom.RoleUser, "m1 zebra")
			Say(t, laptop, s, loom.RoleAssistant, "m2")
			li, di := exchange(t, laptop, desktop, 0, 0, false)

			c.tick()
			Say(t, laptop, s, loom.RoleUser, "a3")
			Say(t, laptop, s, loom.RoleAssistant, "a4")
			c.tick()
			ds, err := desktop.Session(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			Say(t, desktop, ds, loom.RoleUser, "b3 zebra")
			Say(t, desktop, ds, loom.RoleAssistant, "b4")
			own, err := desktop.Fork(ctx, s.ID, loom.ForkOptions{Turn: 2})
			if err != nil {
				t.Fatal(err)
			}
			Say(t, desktop, ds, loom.RoleUser, "b5")
			li, di = exchange(t, laptop, desktop, li, di, desktopFirst)

			v := SameView(t, laptop, desktop, "zebra")
			if got := texts(v.Messages[s.ID]); got != "m1 zebra m2 a3 a4" {
				t.Errorf("the session holds %q", got)
			}
			var fork *loom.Session
			for _, x := range v.Sessions {
				if x.ParentID == s.ID && x.Title == "plan (conflict)" {
					fork = x
				}
			}
			if fork == nil {
				t.Fatalf("no conflict fork:\n%s", DumpSessions(v.Sessions))
			}
			if got := texts(v.Messages[fork.ID]); got != "m1 zebra m2 b3 zebra b4 b5" {
				t.Errorf("the conflict fork holds %q", got)
			}
			if fork.Kind != loom.KindFork || fork.ForkTurn != 1 || fork.Key != "" || fork.MessageCount != 5 || fork.TurnCount != 3 {
				t.Errorf("conflict fork: %s", mustJSON(fork))
			}
			o, err := laptop.Session(ctx, own.ID)
			if err != nil || o.ParentID != fork.ID || texts(v.Messages[own.ID]) != "m1 zebra m2 b3 zebra b4" {
				t.Errorf("the desktop's own fork: parent %s (conflict fork %s), holds %q, %v", o.ParentID, fork.ID, texts(v.Messages[own.ID]), err)
			}
			// m1 in the session, the conflict fork and the desktop's fork,
			// b3 in the last two: each message one hit, naming every
			// session that holds it.
			places := 0
			for _, h := range v.Hits["zebra"] {
				places += 1 + len(h.AlsoIn)
			}
			if Searches(laptop) && (len(v.Hits["zebra"]) != 2 || places != 5) {
				t.Errorf("search finds %d hits in %d places, want 2 in 5", len(v.Hits["zebra"]), places)
			}

			// Both go on: the laptop in the session, the desktop in the
			// fork; a rename of the session reaches the fork.
			c.tick()
			cur, _ := laptop.Session(ctx, s.ID)
			Say(t, laptop, cur, loom.RoleUser, "a5")
			f, _ := desktop.Session(ctx, fork.ID)
			Say(t, desktop, f, loom.RoleAssistant, "b6")
			title := "zebra plan"
			if _, err := desktop.UpdateSession(ctx, s.ID, loom.SessionUpdate{Title: &title}); err != nil {
				t.Fatal(err)
			}
			exchange(t, laptop, desktop, li, di, desktopFirst)
			v = SameView(t, laptop, desktop, "zebra")
			if got := texts(v.Messages[s.ID]); got != "m1 zebra m2 a3 a4 a5" {
				t.Errorf("the session holds %q", got)
			}
			if got := texts(v.Messages[fork.ID]); got != "m1 zebra m2 b3 zebra b4 b5 b6" {
				t.Errorf("the conflict fork holds %q", got)
			}
			f, _ = laptop.Session(ctx, fork.ID)
			if f.Title != "zebra plan (conflict)" {
				t.Errorf("the conflict fork's title after the session's rename: %q", f.Title)
			}
		})
	}
}

// applyWaiting applies to st every record of logs it has not applied,
// in an order rnd picks among the hosts' next records, as pulls that
// interleave hosts would: a record that waits (sessionstore.ErrWaits) waits with
// the rest of its host's log until another host's record is applied.
func applyWaiting(t *testing.T, rnd *rand.Rand, st Store, logs map[synclog.HostID][]Pulled) {
	t.Helper()
	ctx := context.Background()
	self, _ := st.SyncHost(ctx)
	applied, err := st.SyncApplied(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hosts := slices.Sorted(func(yield func(synclog.HostID) bool) {
		for h := range logs {
			if h != self && !yield(h) {
				return
			}
		}
	})
	for {
		rnd.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
		progress, left := false, false
		var waits []string
		for _, h := range hosts {
			for _, r := range logs[h] {
				if r.Header.Index <= applied[h] {
					continue
				}
				err := st.ApplySync(ctx, r.Header, r.Payload)
				if errors.Is(err, sessionstore.ErrWaits) {
					left = true
					waits = append(waits, err.Error())
					break
				}
				if err != nil {
					t.Fatalf("apply %s (%s): %v", r.Header, r.Payload.Type(), err)
				}
				applied[h] = r.Header.Index
				progress = true
				if rnd.IntN(2) == 0 {
					break // on to another host
				}
			}
			for _, r := range logs[h] {
				if r.Header.Index > applied[h] {
					left = true
				}
			}
		}
		if !left {
			return
		}
		if !progress {
			t.Fatalf("every log waits for a record that never comes: %s", strings.Join(waits, "; "))
		}
	}
}

// Random histories on three stores: each appends turns to a session and
// the conflict forks it grows, and applies the others' records at random
// moments in random orders, the clock moving on. In the end the three,
// and a fourth that applies every log at once, show the same sessions
// (rows, times and counters included), messages and search results.
func testApplySyncConcurrentAppendsConverge(t *testing.T, newStore Factory) {
	const histories = 30
	forks := 0
	for h := range uint64(histories) {
		ctx := context.Background()
		rnd := rand.New(rand.NewPCG(h, 26))
		c := &manualClock{at: time.Time{}.AddDate(2026, 0, 0)}
		a, b, c3 := Synced(t, newStore, c.now), Synced(t, newStore, c.now), Synced(t, newStore, c.now)
		stores := []Store{a, b, c3}
		logs := func() map[synclog.HostID][]Pulled {
			out := map[synclog.HostID][]Pulled{}
			for _, st := range stores {
				host, _ := st.SyncHost(ctx)
				out[host] = Pull(t, st, 0)
			}
			return out
		}
		s := &loom.Session{UserID: "alice", Title: "race"}
		Say(t, a, s, loom.RoleUser, "first zebra")
		n := 0
		for range 6 + rnd.IntN(10) {
			c.tick()
			st := stores[rnd.IntN(len(stores))]
			if rnd.IntN(3) == 0 {
				applyWaiting(t, rnd, st, logs())
				continue
			}
			ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) == 0 {
				continue
			}
			cur := ss[rnd.IntN(len(ss))]
			for range 1 + rnd.IntN(2) {
				n++
				role := loom.RoleUser
				if rnd.IntN(2) == 0 {
					role = loom.RoleAssistant
				}
				Say(t, st, cur, role, fmt.Sprintf("zebra %d", n))
			}
		}
		all := logs()
		for _, st := range stores {
			applyWaiting(t, rnd, st, all)
		}
		fresh := Synced(t, newStore, c.now)
		applyWaiting(t, rnd, fresh, all)
		v := SameView(t, a, b, "zebra")
		SameView(t, a, c3, "zebra")
		SameView(t, a, fresh, "zebra")
		for _, x := range v.Sessions {
			if strings.HasSuffix(x.Title, "(conflict)") {
				forks++
			}
		}
	}
	if forks < histories/3 {
		t.Fatalf("only %d conflict forks in %d histories: the test does not test much", forks, histories)
	}
	t.Logf("%d histories, %d conflict forks", histories, forks)
}

// keyOf returns the key session id has on st, "(trash)" when it is in
// the trash.
func keyOf(t *testing.T, st Store, id string) string {
	t.Helper()
	s, err := st.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if s.DeletedAt != nil {
		return "(trash)"
	}
	return s.Key
}

// Two machines each start a session with one key in one project: after
// they sync, both keep both sessions, and the one started first holds
// the key on both, whichever applies first. When it lets the key go (the
// trash, a new key), the other takes it, everywhere; a restore made where
// the key was free brings the first claim back in front.
func testApplySyncKeyClash(t *testing.T, newStore Factory) {
	for _, bFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("b first %v", bFirst), func(t *testing.T) {
			ctx := context.Background()
			a, b, c := clockedPair(t, newStore)
			p := loom.Project{ID: "p1", Name: "api", Root: "/src/api"}
			first := &loom.Session{UserID: "alice", Key: "cli:api", Project: p}
			Say(t, a, first, loom.RoleUser, "on the desktop")
			c.tick()
			second := &loom.Session{UserID: "alice", Key: "cli:api", Project: p}
			Say(t, b, second, loom.RoleUser, "on the laptop")
			var ai, bi int64
			keys := func(what, k1, k2 string) {
				t.Helper()
				ai, bi = exchange(t, a, b, ai, bi, bFirst)
				SameView(t, a, b)
				for _, st := range []Store{a, b} {
					if g1, g2 := keyOf(t, st, first.ID), keyOf(t, st, second.ID); g1 != k1 || g2 != k2 {
						t.Fatalf("%s: keys %q and %q, want %q and %q", what, g1, g2, k1, k2)
					}
				}
			}
			keys("after the clash", "cli:api", "")

			// The holder goes to the trash on the desktop: the laptop's
			// session takes the key. Restoring the first is refused while
			// the other has its key, as on one machine.
			c.tick()
			if _, err := a.Delete(ctx, first.ID, loom.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			keys("the holder in the trash", "(trash)", "cli:api")
			if err := a.Restore(ctx, first.ID); loom.ErrorCode(err) != loom.ECONFLICT {
				t.Fatalf("restoring the first while the other holds its key: %v", err)
			}
			if k := keyOf(t, a, second.ID); k != "cli:api" {
				t.Fatalf("the laptop's session has key %q", k)
			}

			// The laptop trashes its session and restores the first
			// (the key is free there): the first holds it again.
			c.tick()
			if _, err := b.Delete(ctx, second.ID, loom.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := b.Restore(ctx, first.ID); err != nil {
				t.Fatal(err)
			}
			if err := b.Restore(ctx, second.ID); loom.ErrorCode(err) != loom.ECONFLICT {
				t.Fatalf("restoring the second while the first holds the key: %v", err)
			}
			keys("the first restored", "cli:api", "(trash)")

			// The first lets the key go for another: the second, back
			// from the trash, takes it.
			c.tick()
			other := "cli:old-api"
			if _, err := a.UpdateSession(ctx, first.ID, loom.SessionUpdate{Key: &other}); err != nil {
				t.Fatal(err)
			}
			if err := a.Restore(ctx, second.ID); err != nil {
				t.Fatal(err)
			}
			keys("the first re-keyed", "cli:old-api", "cli:api")
		})
	}
}

// A session started with a key on one machine while another machine,
// offline, gives another session that key and then lets it go: every
// host ends with the same holder, whatever it applied first.
func testApplySyncKeyLetGoBeforeArrival(t *testing.T, newStore Factory) {
	for _, bFirst := range []bool{false, true} {
		ctx := context.Background()
		a, b, c := clockedPair(t, newStore)
		first := &loom.Session{UserID: "alice", Key: "cli:api"}
		Say(t, a, first, loom.RoleUser, "first")
		c.tick()
		second := &loom.Session{UserID: "alice", Key: "cli:api"}
		Say(t, b, second, loom.RoleUser, "second")
		c.tick()
		other := "cli:moved"
		if _, err := a.UpdateSession(ctx, first.ID, loom.SessionUpdate{Key: &other}); err != nil {
			t.Fatal(err)
		}
		exchange(t, a, b, 0, 0, bFirst)
		SameView(t, a, b)
		if k1, k2 := keyOf(t, a, first.ID), keyOf(t, a, second.ID); k1 != "cli:moved" || k2 != "cli:api" {
			t.Fatalf("b first %v: keys %q and %q", bFirst, k1, k2)
		}
	}
}
