package sessionstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/loomhq/loom/synclog"
)

// lifeEvent is one record that changes whether a session is in the
// trash.
type lifeEvent struct {
	trash   *synclog.Trashed
	restore bool
	work    int64 // index of a record of work by host
	host    synclog.HostID
	s       synclog.Stamp
}

func (e lifeEvent) apply(l *Life) {
	switch {
	case e.trash != nil:
		l.Trashed(e.s, e.trash)
	case e.restore:
		l.Restored(e.s)
	default:
		l.Worked(e.host, e.work)
	}
}

func lifeOf(events ...lifeEvent) *time.Time {
	var l Life
	for _, e := range events {
		e.apply(&l)
	}
	return l.DeletedAt()
}

func TestTrashRules(t *testing.T) {
	at := t0.Add(time.Hour)
	trash := func(ms int, h synclog.HostID, seen synclog.Vector) lifeEvent {
		return lifeEvent{trash: &synclog.Trashed{SessionIDs: []string{sessionID}, At: at, Seen: seen}, s: stampAt(ms, h)}
	}
	restore := func(ms int, h synclog.HostID) lifeEvent { return lifeEvent{restore: true, s: stampAt(ms, h)} }
	work := func(h synclog.HostID, index int64) lifeEvent { return lifeEvent{host: h, work: index} }
	for _, tc := range []struct {
		name    string
		events  []lifeEvent
		trashed bool
	}{
		{"trashed", []lifeEvent{work(hostA, 1), trash(10, hostA, synclog.Vector{hostA: 1})}, true},
		{"trashed after seeing the other host's work",
			[]lifeEvent{work(hostA, 1), work(hostB, 4), trash(10, hostA, synclog.Vector{hostA: 1, hostB: 4})}, true},
		// The laptop deletes the session while the desktop, offline, is
		// still working in it: the desktop's turns keep it out of the
		// trash on both.
		{"work the trash had not seen",
			[]lifeEvent{work(hostA, 1), trash(10, hostA, synclog.Vector{hostA: 1, hostB: 3}), work(hostB, 4)}, false},
		{"work the trash had not seen, stamped before it",
			[]lifeEvent{work(hostB, 4), trash(10, hostA, synclog.Vector{hostA: 1, hostB: 3})}, false},
		{"restored", []lifeEvent{trash(10, hostA, synclog.Vector{hostA: 1}), restore(20, hostB)}, false},
		{"restored, then trashed again", []lifeEvent{trash(10, hostA, nil), restore(20, hostB), trash(30, hostA, nil)}, true},
		{"restored before a later trash", []lifeEvent{restore(5, hostB), trash(10, hostA, nil)}, true},
		{"the latest trash is the one that counts",
			[]lifeEvent{work(hostB, 4), trash(10, hostA, synclog.Vector{hostB: 3}), trash(20, hostC, synclog.Vector{hostB: 4})}, true},
		{"never trashed", []lifeEvent{work(hostA, 1), restore(5, hostB)}, false},
	} {
		for _, order := range [][]lifeEvent{tc.events, reversed(tc.events)} {
			got := lifeOf(order...)
			if (got != nil) != tc.trashed || got != nil && !got.Equal(at) {
				t.Errorf("%s: deleted at %v, want trashed %v", tc.name, got, tc.trashed)
			}
		}
	}
}

// Any set of trash, restore and work records gives the same answer in
// every order.
func TestTrashConverges(t *testing.T) {
	hosts := []synclog.HostID{hostA, hostB, hostC}
	for seed := range uint64(200) {
		rnd := rand.New(rand.NewPCG(seed, 9))
		var events []lifeEvent
		for i := range 2 + rnd.IntN(5) {
			h := hosts[rnd.IntN(3)]
			s := synclog.Stamp{HLC: synclog.NewHLC(t0, uint16(i)), Host: h}
			switch rnd.IntN(3) {
			case 0:
				seen := synclog.Vector{}
				for _, o := range hosts {
					seen[o] = int64(rnd.IntN(4))
				}
				events = append(events, lifeEvent{trash: &synclog.Trashed{At: t0.Add(time.Duration(i) * time.Hour), Seen: seen}, s: s})
			case 1:
				events = append(events, lifeEvent{restore: true, s: s})
			default:
				events = append(events, lifeEvent{host: h, work: int64(1 + rnd.IntN(4))})
			}
		}
		want := fmt.Sprint(lifeOf(events...))
		permutations(events, func(order []lifeEvent) {
			if got := fmt.Sprint(lifeOf(order...)); got != want {
				t.Fatalf("seed %d: deleted at %s in one order, %s in another", seed, got, want)
			}
		})
	}
}

func TestRescue(t *testing.T) {
	p := &synclog.Purged{SessionIDs: []string{sessionID}, Seen: synclog.Vector{hostA: 5, hostB: 2}}
	for _, tc := range []struct {
		name          string
		self          synclog.HostID
		work, touched synclog.Vector
		want          bool
	}{
		{"nothing of ours", hostA, synclog.Vector{hostB: 2}, nil, false},
		{"our work, seen", hostA, synclog.Vector{hostA: 5}, nil, false},
		{"our work, not seen", hostB, synclog.Vector{hostA: 5, hostB: 3}, nil, true},
		{"another host's work, not seen: that host saves it", hostA, synclog.Vector{hostC: 1}, nil, false},
		{"a host the purge knew nothing of", hostC, synclog.Vector{hostC: 1}, nil, true},
		{"our restore or rename, seen", hostB, synclog.Vector{hostB: 1}, synclog.Vector{hostB: 2}, false},
		{"our restore or rename, not seen", hostB, synclog.Vector{hostB: 1}, synclog.Vector{hostB: 3}, true},
		{"another host's restore, not seen: that host saves it", hostA, nil, synclog.Vector{hostB: 3}, false},
	} {
		if got := Rescue(p, tc.self, Life{Work: tc.work, Touched: tc.touched}); got != tc.want {
			t.Errorf("%s: Rescue = %v", tc.name, got)
		}
	}
	if got := recoveredTitle("plan"); got != "plan (recovered)" {
		t.Errorf("RecoveredTitle = %q", got)
	}
}
