package team_test

import (
	"errors"
	"testing"

	"github.com/loomhq/loom/team"
)

// TestRecordsKnowTheirHead: a record names the chain head its writer
// verified. Refused: one whose author was removed by that head, one
// sealed under an older epoch than that head's, one naming a head this
// chain does not hold; one of a removed member the removal does not name
// as written before, headed or not. Kept apart as evidence: one naming
// a later head, or an epoch this chain has not made. Applied: what the
// removal names as written before, and records of a loom before heads
// by a member.
func TestRecordsKnowTheirHead(t *testing.T) {
	w := newWorld(t)
	before := w.state(t)
	seal := func(ring team.Keyring, id *team.Identity, host string, index, seq int64, head string, epoch int) team.Record {
		return must(team.SealRecord(team.Header{Team: teamID, Host: host, Index: index, Epoch: epoch, Author: id.Fingerprint(), ChainSeq: seq, ChainHead: head}, ring, id, []byte("x")))
	}
	carolsOld := seal(w.ring, w.carol, "c1", 1, before.Seq, before.Head, 1)
	b, ring, err := team.RotateCut(before, w.admin, w.ring, w.carol.Fingerprint(), map[string]int64{"c1": 1}, at)
	w.add(t, b, err)
	st := w.state(t)
	if st.Cut["c1"] != 1 {
		t.Fatalf("the removal's writers: %v", st.Cut)
	}
	refused := func(what string, r team.Record, want error) {
		t.Helper()
		if _, _, err := team.OpenRecord(st, ring, r); !errors.Is(err, want) {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
	}
	if _, _, err := team.OpenRecord(st, ring, carolsOld); err != nil {
		t.Fatalf("what carol wrote before her removal, named by it: %v", err)
	}
	refused("carol's next record under her writer id, dated back", seal(w.ring, w.carol, "c1", 2, before.Seq, before.Head, 1), team.ErrNotThen)
	refused("carol's record under a new writer id, dated back", seal(w.ring, w.carol, "c2", 1, before.Seq, before.Head, 1), team.ErrNotThen)
	refused("carol's record naming no head", seal(w.ring, w.carol, "c1", 2, 0, "", 1), team.ErrNotThen)
	refused("carol's record naming the head of her removal", seal(w.ring, w.carol, "c1", 2, st.Seq, st.Head, 1), team.ErrNotThen)
	refused("bob's record under the old epoch, naming the new head", seal(ring, w.bob, "b1", 1, st.Seq, st.Head, 1), team.ErrNotThen)
	refused("bob's record naming a head this chain does not hold", seal(ring, w.bob, "b1", 1, before.Seq, st.Head, 1), team.ErrNotThen)
	for _, r := range []team.Record{seal(ring, w.bob, "b1", 1, before.Seq, before.Head, 1), seal(ring, w.bob, "b1", 2, st.Seq, st.Head, 2), seal(ring, w.bob, "b1", 3, 0, "", 2)} {
		if _, _, err := team.OpenRecord(st, ring, r); err != nil {
			t.Fatalf("bob's record %d: %v", r.Index, err)
		}
	}
	var nc *team.NewerChain
	if _, _, err := team.OpenRecord(before, w.ring, seal(ring, w.bob, "b1", 2, st.Seq, st.Head, 2)); !errors.As(err, &nc) || !nc.Signed || nc.Seq != st.Seq || nc.Epoch != 2 {
		t.Fatalf("bob's record of the newer chain, read on the older: %v", err)
	}
}

// TestRecordsOfALeaver: a leaver's records read after the leave and
// before the admin's rotation are kept apart (ErrPending); the rotation
// names what they wrote before, which then opens, and nothing past it.
func TestRecordsOfALeaver(t *testing.T) {
	w := newWorld(t)
	st := w.state(t)
	rec := func(index int64) team.Record {
		return must(team.SealRecord(team.Header{Team: teamID, Host: "c1", Index: index, Epoch: 1, Author: w.carol.Fingerprint(), ChainSeq: st.Seq, ChainHead: st.Head}, w.ring, w.carol, []byte("x")))
	}
	first, second := rec(1), rec(2)
	b, err := team.Leave(st, w.carol, at)
	w.add(t, b, err)
	if _, _, err := team.OpenRecord(w.state(t), w.ring, first); !errors.Is(err, team.ErrPending) {
		t.Fatalf("a leaver's record before the rotation: %v", err)
	}
	b, _, err = team.RotateCut(w.state(t), w.admin, w.ring, "", map[string]int64{"c1": 1}, at)
	w.add(t, b, err)
	after := w.state(t)
	if _, _, err := team.OpenRecord(after, w.ring, first); err != nil {
		t.Fatalf("what the leaver wrote before, named by the rotation: %v", err)
	}
	if _, _, err := team.OpenRecord(after, w.ring, second); !errors.Is(err, team.ErrNotThen) {
		t.Fatalf("a leaver's record past what the rotation names: %v", err)
	}
}
