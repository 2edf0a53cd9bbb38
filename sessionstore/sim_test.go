package sessionstore

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// This file checks the concurrent-append rule the way it is used: hosts
// append to sessions, sync with each other at random moments, and apply
// what they pull as a store would (route each record to the session
// that holds the message it follows, then PlanAppend); in the end every
// host, and a new host that applies all the logs in any order, holds the
// same sessions with the same messages and the same parents.

// simRecord is an append record with its header.
type simRecord struct {
	h synclog.Header
	p *synclog.MessagesAppended
}

// simSession is a session as the rules leave it: its messages by seq,
// its parent, and the sessions its messages moved to (its conflict
// forks).
type simSession struct {
	id, parent string
	// base is how many of the parent's messages a fork begins with.
	base  int64
	msgs  []Entry
	forks []*simSession
}

// replica is one host's sessions.
type replica struct {
	host     synclog.HostID
	clock    *synclog.Clock
	sessions map[string]*simSession
	applied  map[synclog.HostID]int64
	log      []simRecord
}

func newReplica(h synclog.HostID, now func() time.Time) *replica {
	return &replica{host: h, clock: synclog.NewClock(now, 0), sessions: map[string]*simSession{}, applied: map[synclog.HostID]int64{}}
}

// write appends n new messages to session id as this host's user does,
// and records it. A session not there yet is created by its first
// messages.
func (r *replica) write(t *testing.T, id string, n int) {
	s := r.sessions[id]
	p := &synclog.MessagesAppended{SessionID: id, FirstSeq: 1, At: t0}
	if s != nil && len(s.msgs) > 0 {
		p.FirstSeq, p.PrevID = int64(len(s.msgs))+1, s.msgs[len(s.msgs)-1].ID
	}
	for i := range n {
		seq := p.FirstSeq + int64(i)
		p.Messages = append(p.Messages, &loom.Message{ID: fmt.Sprintf("%s-%d-%d", r.host[len(r.host)-1:], len(r.log)+1, seq), Seq: seq})
	}
	rec := simRecord{h: synclog.Header{Host: r.host, Index: int64(len(r.log)) + 1, HLC: r.clock.Now(), KeyID: keyID}, p: p}
	r.log = append(r.log, rec)
	if !r.apply(t, rec) {
		t.Fatalf("host %s cannot apply its own record %d", r.host, rec.h.Index)
	}
}

// apply applies one record, and reports false when it must wait for
// records it follows: the next of its host's log, or the record that
// appended the message it follows.
func (r *replica) apply(t *testing.T, rec simRecord) bool {
	if rec.h.Index <= r.applied[rec.h.Host] {
		return true
	}
	if rec.h.Index != r.applied[rec.h.Host]+1 {
		return false
	}
	s := r.route(rec.p)
	if s == nil {
		return false
	}
	r.plan(t, s, rec)
	r.applied[rec.h.Host] = rec.h.Index
	if err := r.clock.Observe(rec.h.HLC); err != nil {
		t.Fatal(err)
	}
	return true
}

// route returns the session that holds the message p follows at
// p.FirstSeq-1: the session p names, else the nearest of the sessions
// its messages moved to, breadth first; nil when none does yet.
func (r *replica) route(p *synclog.MessagesAppended) *simSession {
	s := r.sessions[p.SessionID]
	if s == nil {
		if p.FirstSeq != 1 {
			return nil
		}
		s = &simSession{id: p.SessionID}
		r.sessions[s.id] = s
	}
	for queue := []*simSession{s}; len(queue) > 0; queue = queue[1:] {
		c := queue[0]
		if p.FirstSeq == 1 || int64(len(c.msgs)) >= p.FirstSeq-1 && c.msgs[p.FirstSeq-2].ID == p.PrevID {
			return c
		}
		queue = append(queue, c.forks...)
	}
	return nil
}

func (r *replica) plan(t *testing.T, s *simSession, rec simRecord) {
	p, st := rec.p, rec.h.Stamp()
	w := AppendWindow{Count: int64(len(s.msgs))}
	if p.FirstSeq > 1 && w.Count >= p.FirstSeq-1 {
		w.Prev = s.msgs[p.FirstSeq-2].ID
	}
	if w.Count >= p.FirstSeq {
		w.Next = s.msgs[p.FirstSeq-1 : min(w.Count, p.FirstSeq-1+int64(len(p.Messages)))]
	}
	incoming := func(from int) []Entry {
		var out []Entry
		for _, m := range p.Messages[from:] {
			out = append(out, Entry{ID: m.ID, Stamp: st})
		}
		return out
	}
	pl := PlanAppend(w, st, p)
	switch pl.Action {
	case Applied:
	case appendAfter:
		s.msgs = append(s.msgs, incoming(pl.Skip)...)
	case MoveLocal:
		// The session's messages from At on move to the fork, and so do
		// the forks made from them; the incoming ones take their place.
		f := &simSession{id: pl.Fork, parent: s.id, base: pl.At - 1, msgs: slices.Clone(s.msgs)}
		var keep []*simSession
		for _, c := range s.forks {
			if c.base >= pl.At {
				c.parent = f.id
				f.forks = append(f.forks, c)
			} else {
				keep = append(keep, c)
			}
		}
		s.forks = append(keep, f)
		s.msgs = append(s.msgs[:pl.At-1:pl.At-1], incoming(pl.Skip)...)
		r.add(t, f)
	case ForkIncoming:
		if f := r.sessions[pl.Fork]; f != nil {
			r.plan(t, f, rec)
			return
		}
		f := &simSession{id: pl.Fork, parent: s.id, base: pl.At - 1}
		f.msgs = append(slices.Clone(s.msgs[:pl.At-1]), incoming(pl.Skip)...)
		s.forks = append(s.forks, f)
		r.add(t, f)
	default:
		t.Fatalf("%s for a record routed to a session that holds what it follows", pl.Action)
	}
}

func (r *replica) add(t *testing.T, s *simSession) {
	if r.sessions[s.id] != nil {
		t.Fatalf("fork %s made twice", s.id)
	}
	r.sessions[s.id] = s
}

// pull applies the records of logs this replica has not applied, in an
// order rnd picks among the hosts' next records, as pulls that interleave
// hosts arbitrarily would.
func (r *replica) pull(t *testing.T, rnd *rand.Rand, logs ...[]simRecord) {
	next := make([]int, len(logs))
	for {
		var ready []int
		for i, l := range logs {
			if next[i] < len(l) {
				ready = append(ready, i)
			}
		}
		if len(ready) == 0 {
			return
		}
		rnd.Shuffle(len(ready), func(i, j int) { ready[i], ready[j] = ready[j], ready[i] })
		progress := false
		for _, i := range ready {
			if r.apply(t, logs[i][next[i]]) {
				next[i]++
				progress = true
				break
			}
		}
		if !progress {
			t.Fatalf("host %s: every log waits for a record that never comes:\n%s", r.host, r.dump())
		}
	}
}

// dump returns the replica's sessions as text, one a line, sorted: what
// two replicas must agree on.
func (r *replica) dump() string {
	var lines []string
	for _, s := range r.sessions {
		ids := make([]string, len(s.msgs))
		for i, e := range s.msgs {
			ids[i] = e.ID
		}
		lines = append(lines, fmt.Sprintf("%s parent=%s base=%d: %s", s.id, s.parent, s.base, strings.Join(ids, " ")))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestConcurrentAppendsConverge runs many random histories of three hosts
// appending to one session and to the conflict forks it grows, syncing at
// random moments with clocks that disagree and step back. Every host ends
// with the same sessions, and so does a new host applying the logs in
// any order.
func TestConcurrentAppendsConverge(t *testing.T) {
	const histories, orders = 1000, 8
	conflicts := 0
	for h := range uint64(histories) {
		rnd := rand.New(rand.NewPCG(h, 26))
		hosts := make([]*replica, 3)
		for i, id := range []synclog.HostID{hostA, hostB, hostC} {
			skew := time.Duration(rnd.IntN(4000)-2000) * time.Millisecond
			var steps time.Duration
			hosts[i] = newReplica(id, func() time.Time {
				steps += time.Duration(rnd.IntN(300)-60) * time.Millisecond // mostly forwards, sometimes back
				return t0.Add(skew + steps)
			})
		}
		hosts[0].write(t, sessionID, 1)
		for range 6 + rnd.IntN(14) {
			r := hosts[rnd.IntN(len(hosts))]
			if rnd.IntN(3) == 0 {
				r.pull(t, rnd, hosts[0].log, hosts[1].log, hosts[2].log)
				continue
			}
			if len(r.sessions) == 0 {
				continue
			}
			ids := slices.Sorted(maps.Keys(r.sessions))
			r.write(t, ids[rnd.IntN(len(ids))], 1+rnd.IntN(3))
		}
		logs := [][]simRecord{hosts[0].log, hosts[1].log, hosts[2].log}
		for _, r := range hosts {
			r.pull(t, rnd, logs...)
		}
		want := hosts[0].dump()
		conflicts += strings.Count(want, "parent=") - strings.Count(want, "parent= ")
		for _, r := range hosts[1:] {
			if got := r.dump(); got != want {
				t.Fatalf("history %d: host %s holds\n%s\nhost %s holds\n%s", h, hosts[0].host, want, r.host, got)
			}
		}
		for o := range orders {
			fresh := newReplica("0196a3b2-0000-4000-8000-0000000000ff", func() time.Time { return t0.Add(time.Hour) })
			fresh.pull(t, rand.New(rand.NewPCG(h, uint64(o))), logs...)
			if got := fresh.dump(); got != want {
				t.Fatalf("history %d, order %d: a new host holds\n%s\nthe others\n%s", h, o, got, want)
			}
		}
	}
	if conflicts < histories/2 {
		t.Fatalf("only %d conflict forks in %d histories: the test does not test much", conflicts, histories)
	}
	t.Logf("%d histories, %d conflict forks", histories, conflicts)
}

// TestConflictExample is the example of docs/sync.md: the laptop and the
// desktop each continue a session of two messages offline. After they
// sync, both hold the session with the laptop's turn (its first message
// was stamped first) and a conflict fork with the desktop's, whichever
// pulled first.
func TestConflictExample(t *testing.T) {
	clockAt := func(ms int) func() time.Time {
		return func() time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	}
	for _, laptopFirst := range []bool{true, false} {
		laptop, desktop := newReplica(hostA, clockAt(1000)), newReplica(hostB, clockAt(2000))
		laptop.write(t, sessionID, 2)
		desktop.pull(t, rand.New(rand.NewPCG(1, 1)), laptop.log)
		laptop.write(t, sessionID, 2)  // offline on the laptop
		desktop.write(t, sessionID, 2) // and on the desktop
		if laptopFirst {
			laptop.pull(t, rand.New(rand.NewPCG(1, 1)), desktop.log)
			desktop.pull(t, rand.New(rand.NewPCG(1, 1)), laptop.log)
		} else {
			desktop.pull(t, rand.New(rand.NewPCG(1, 1)), laptop.log)
			laptop.pull(t, rand.New(rand.NewPCG(1, 1)), desktop.log)
		}
		fork := conflictForkID("b-1-3", 3, synclog.Stamp{HLC: synclog.NewHLC(t0.Add(2*time.Second), 0), Host: hostB})
		lines := []string{
			sessionID + " parent= base=0: a-1-1 a-1-2 a-2-3 a-2-4",
			fork + " parent=" + sessionID + " base=2: a-1-1 a-1-2 b-1-3 b-1-4",
		}
		slices.Sort(lines)
		want := strings.Join(lines, "\n")
		for _, r := range []*replica{laptop, desktop} {
			if got := r.dump(); got != want {
				t.Errorf("laptop first %v: %s holds\n%s\nwant\n%s", laptopFirst, r.host, got, want)
			}
		}
	}
}
