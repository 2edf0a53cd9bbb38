package team_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/team"
)

// joinEntry signs a join with inv as a client that skips its own checks
// would: what every client reading the chain must refuse by itself.
func joinEntry(t *testing.T, st *team.State, inv, me *team.Identity, ring team.Keyring, when time.Time) []byte {
	t.Helper()
	e := st.NewEntry(team.KindJoin, inv.Fingerprint(), when)
	e.Invite, e.Member = st.Past[inv.Fingerprint()], me.Public("eve", "eve")
	e.Keys = map[string][]byte{me.Fingerprint(): must(team.Wrap(ring, e.Member.Box))}
	return must(team.Sign(e, inv))
}

func TestInviteExpires(t *testing.T) {
	w := newWorld(t)
	exp := at.Add(7 * 24 * time.Hour)
	b, inv, err := team.Invite(w.state(t), w.admin, w.ring, "dave", &exp, false, at)
	w.add(t, b, err)
	late := exp.Add(time.Minute)
	_, _, err = team.Join(w.state(t), inv, identity(t), "dave", "dave", late)
	if err == nil || !strings.Contains(err.Error(), "expired on") {
		t.Fatalf("a join after the invite expired: %v", err)
	}
	// A chain holding a join dated after the expiry is refused by every
	// client, and so is one dated back before the entry it follows.
	if _, err := team.Verify(teamID, w.admin.Fingerprint(), append(w.chain, joinEntry(t, w.state(t), inv, identity(t), w.ring, late))); !errors.Is(err, team.ErrForged) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("an expired invite's join in the chain: %v", err)
	}
	if _, err := team.Verify(teamID, w.admin.Fingerprint(), append(w.chain, joinEntry(t, w.state(t), inv, identity(t), w.ring, at.Add(-time.Hour)))); !errors.Is(err, team.ErrForged) {
		t.Fatalf("a join dated back: %v", err)
	}
	// Before it expires, it joins.
	b, _, err = team.Join(w.state(t), inv, identity(t), "dave", "dave", exp.Add(-time.Minute))
	w.add(t, b, err)

	// A rotation after an invite expired does not wrap the key for it,
	// and the admin's machine knows to rotate.
	b, inv2, err := team.Invite(w.state(t), w.admin, w.ring, "erin", &exp, false, at)
	w.add(t, b, err)
	if st := w.state(t); st.ExpiredHolder(exp) || !st.ExpiredHolder(late) {
		t.Fatal("ExpiredHolder")
	}
	b, _, err = team.Rotate(w.state(t), w.admin, w.ring, "", late)
	w.add(t, b, err)
	st := w.state(t)
	if st.Holders[2][inv2.Fingerprint()] || st.ExpiredHolder(late) {
		t.Fatal("the rotation after the invite expired wrapped the key for it")
	}
}

func TestInviteRevoked(t *testing.T) {
	w := newWorld(t)
	b, inv, err := team.Invite(w.state(t), w.admin, w.ring, "dave", nil, false, at)
	w.add(t, b, err)
	// Only the admin revokes a member's invite.
	if _, err := team.Revoke(w.state(t), w.bob, inv.Fingerprint(), at); err == nil {
		t.Fatal("bob revoked the admin's invite")
	}
	st := w.state(t)
	e := st.NewEntry(team.KindRevoke, w.bob.Fingerprint(), at)
	e.Target = inv.Fingerprint()
	if _, err := team.Verify(teamID, w.admin.Fingerprint(), append(w.chain, must(team.Sign(e, w.bob)))); !errors.Is(err, team.ErrForged) {
		t.Fatalf("a member's revoke of the admin's invite in the chain: %v", err)
	}
	b, err = team.Revoke(w.state(t), w.admin, inv.Fingerprint(), at)
	w.add(t, b, err)
	st = w.state(t)
	if !st.Stale {
		t.Fatal("a revoked invite holding the newest key leaves the team stale until a rotation")
	}
	if _, _, err := team.Join(st, inv, identity(t), "dave", "dave", at); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("a join with a revoked invite: %v", err)
	}
	if _, err := team.Verify(teamID, w.admin.Fingerprint(), append(w.chain, joinEntry(t, st, inv, identity(t), w.ring, at))); !errors.Is(err, team.ErrForged) || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("a revoked invite's join in the chain: %v", err)
	}
	if _, err := team.Revoke(st, w.admin, inv.Fingerprint(), at); err == nil {
		t.Fatal("a second revoke")
	}
	b, _, err = team.Rotate(st, w.admin, w.ring, "", at)
	w.add(t, b, err)
	if st := w.state(t); st.Stale || st.Holders[2][inv.Fingerprint()] {
		t.Fatal("the rotation after the revoke wrapped the new key for the invite")
	}
	// A rotation that wraps the key for the revoked invite is refused.
	st = w.state(t)
	e = st.NewEntry(team.KindRotate, st.Admin, at)
	e.Epoch, e.Keys = 3, map[string][]byte{}
	for _, m := range []*team.Identity{w.admin, w.bob, w.carol, inv} {
		e.Keys[m.Fingerprint()] = must(team.Wrap(w.ring, m.Public("x", "").Box))
	}
	if _, err := team.Verify(teamID, w.admin.Fingerprint(), append(w.chain, must(team.Sign(e, w.admin)))); !errors.Is(err, team.ErrForged) {
		t.Fatalf("a key wrapped for a revoked invite: %v", err)
	}
}

func TestMachines(t *testing.T) {
	w := newWorld(t)
	// Bob invites his laptop; the laptop joins with its own key pair.
	b, inv, err := team.Invite(w.state(t), w.bob, w.ring, "laptop", nil, true, at)
	w.add(t, b, err)
	laptop := identity(t)
	b, _, err = team.Join(w.state(t), inv, laptop, "laptop", "bob", at)
	w.add(t, b, err)
	st := w.state(t)
	if len(st.Members) != 3 || st.MemberOf(laptop.Fingerprint()).Name != "bob" || len(st.MachinesOf(w.bob.Fingerprint())) != 1 {
		t.Fatalf("the laptop is not bob's machine: %d members", len(st.Members))
	}
	// Both of bob's machines open the team's key; the laptop writes as bob.
	ring := must(team.Keys(st, laptop))
	if ring[1].ID() != w.ring[1].ID() {
		t.Fatal("the laptop lacks the team's key")
	}
	rec := must(team.SealRecord(team.Header{Team: teamID, Host: "l1", Index: 1, Epoch: 1, Author: laptop.Fingerprint()}, ring, laptop, []byte("from the laptop")))
	if _, p, err := team.OpenRecord(st, w.ring, rec); err != nil || string(p) != "from the laptop" {
		t.Fatalf("a record of bob's laptop: %q %v", p, err)
	}
	// A member cannot invite a machine for someone else, nor a member.
	if _, _, err := team.Invite(st, w.bob, w.ring, "x", nil, false, at); err == nil {
		t.Fatal("a member invited a member")
	}
	// The key rotation wraps for the laptop too; removing bob removes
	// his laptop with him, and the next key is wrapped for neither.
	b, ring2, err := team.Rotate(st, w.admin, w.ring, "", at)
	w.add(t, b, err)
	if got := must(team.Keys(w.state(t), laptop)); got[2].ID() != ring2[2].ID() {
		t.Fatal("the laptop lacks the rotated key")
	}
	laptopRing := must(team.Keys(w.state(t), laptop))
	b, ring3, err := team.Rotate(w.state(t), w.admin, ring2, w.bob.Fingerprint(), at)
	w.add(t, b, err)
	st = w.state(t)
	if st.Holders[3][laptop.Fingerprint()] || st.Holders[3][w.bob.Fingerprint()] || len(st.Machines) != 0 {
		t.Fatal("the removal left bob's laptop a holder")
	}
	after := must(team.SealRecord(team.Header{Team: teamID, Host: "h9", Index: 1, Epoch: 3, Author: w.carol.Fingerprint()}, ring3, w.carol, []byte("after")))
	for _, k := range laptopRing {
		if _, err := envelope.Open(k, after.Header, after.Body[64:]); err == nil {
			t.Fatal("the removed member's laptop opens what was written after the removal")
		}
	}
	late := must(team.SealRecord(team.Header{Team: teamID, Host: "l1", Index: 2, Epoch: 3, Author: laptop.Fingerprint()}, ring3, laptop, []byte("x")))
	if _, _, err := team.OpenRecord(st, ring3, late); !errors.Is(err, team.ErrNotMember) {
		t.Fatalf("a removed member's machine's record: %v", err)
	}
	// A machine's join by an invite whose member has gone is refused.
	if _, _, err := team.Invite(st, w.bob, ring3, "desk", nil, true, at); err == nil {
		t.Fatal("a removed member invited a machine")
	}
}

func TestMachineLeaves(t *testing.T) {
	w := newWorld(t)
	b, inv, err := team.Invite(w.state(t), w.carol, w.ring, "desk", nil, true, at)
	w.add(t, b, err)
	// Carol revokes her own machine's invite; bob cannot.
	if _, err := team.Revoke(w.state(t), w.bob, inv.Fingerprint(), at); err == nil {
		t.Fatal("bob revoked carol's machine's invite")
	}
	b, err = team.Revoke(w.state(t), w.carol, inv.Fingerprint(), at)
	w.add(t, b, err)
	b, _, err = team.Rotate(w.state(t), w.admin, w.ring, "", at)
	w.add(t, b, err)
	b, inv, err = team.Invite(w.state(t), w.carol, must(team.Keys(w.state(t), w.carol)), "desk2", nil, true, at)
	w.add(t, b, err)
	desk := identity(t)
	b, _, err = team.Join(w.state(t), inv, desk, "desk2", "carol", at)
	w.add(t, b, err)
	// The machine leaves alone: carol stays.
	b, err = team.Leave(w.state(t), desk, at)
	w.add(t, b, err)
	st := w.state(t)
	if st.Members[w.carol.Fingerprint()] == nil || len(st.Machines) != 0 || !st.Stale {
		t.Fatal("a machine's leave")
	}
}

func TestJoinClockBehind(t *testing.T) {
	w := newWorld(t)
	b, inv, err := team.Invite(w.state(t), w.admin, w.ring, "dave", nil, false, at)
	w.add(t, b, err)
	if _, _, err := team.Join(w.state(t), inv, identity(t), "dave", "dave", at.Add(-time.Hour)); err == nil || !strings.Contains(err.Error(), "clock") {
		t.Fatalf("a join from a machine whose clock is an hour behind: %v", err)
	}
	b, _, err = team.Join(w.state(t), inv, identity(t), "dave", "dave", at.Add(-time.Minute))
	w.add(t, b, err)
}

// TestRemovalRevokesInvites: a removal or a leave revokes, in its own
// entry, every open invite made by or for whoever goes; the new key is
// wrapped for none of them, and no client takes a join by one of them.
func TestRemovalRevokesInvites(t *testing.T) {
	w := newWorld(t)
	// Bob's tablet joins; bob invites a laptop and the tablet a phone,
	// both left unused; carol invites a desk.
	b, inv, err := team.Invite(w.state(t), w.bob, w.ring, "tablet", nil, true, at)
	w.add(t, b, err)
	tablet := identity(t)
	b, _, err = team.Join(w.state(t), inv, tablet, "tablet", "bob", at)
	w.add(t, b, err)
	b, laptop, err := team.Invite(w.state(t), w.bob, w.ring, "laptop", nil, true, at)
	w.add(t, b, err)
	b, phone, err := team.Invite(w.state(t), tablet, w.ring, "phone", nil, true, at)
	w.add(t, b, err)
	b, desk, err := team.Invite(w.state(t), w.carol, w.ring, "desk", nil, true, at)
	w.add(t, b, err)

	opens := func(inv *team.Identity, epoch int) bool {
		ring, err := team.Keys(w.state(t), inv)
		return err == nil && ring[epoch] != (envelope.Key{})
	}
	refused := func(inv *team.Identity, what string) {
		t.Helper()
		st := w.state(t)
		if _, _, err := team.Join(st, inv, identity(t), "x", "bob", at); err == nil || !strings.Contains(err.Error(), "revoked") {
			t.Fatalf("a join with %s: %v", what, err)
		}
		ring := must(team.Unwrap(st.Entries[0].Keys[st.Admin], w.admin))
		if _, err := team.Verify(teamID, w.admin.Fingerprint(), append(w.chain, joinEntry(t, st, inv, identity(t), ring, at))); !errors.Is(err, team.ErrForged) || !strings.Contains(err.Error(), "revoked") {
			t.Fatalf("%s's join in the chain: %v", what, err)
		}
	}

	// The tablet goes: the phone's invite it made goes with it; bob's
	// laptop's stays open.
	b, ring, err := team.Rotate(w.state(t), w.admin, w.ring, tablet.Fingerprint(), at)
	w.add(t, b, err)
	st := w.state(t)
	if st.Holders[2][phone.Fingerprint()] || opens(phone, 2) || !st.Holders[2][laptop.Fingerprint()] || !st.Revoked[phone.Fingerprint()] {
		t.Fatalf("after the tablet's removal: the phone's invite holds epoch 2 %v, the laptop's %v", st.Holders[2][phone.Fingerprint()], st.Holders[2][laptop.Fingerprint()])
	}
	refused(phone, "the removed tablet's invite")

	// Bob goes: his laptop's invite goes with him; carol's desk's stays.
	if got := st.Departing(w.bob.Fingerprint()); len(got) != 1 || got[laptop.Fingerprint()] == nil {
		t.Fatalf("Departing(bob) = %v", got)
	}
	b, ring, err = team.Rotate(st, w.admin, ring, w.bob.Fingerprint(), at)
	w.add(t, b, err)
	st = w.state(t)
	if opens(laptop, 3) || !opens(desk, 3) || len(st.Holders[3]) != 3 {
		t.Fatalf("after bob's removal epoch 3 is held by %d keys; the laptop's invite opens it: %v", len(st.Holders[3]), opens(laptop, 3))
	}
	refused(laptop, "the removed member's invite")

	// Carol leaves: her desk's invite goes with her, and the rotation
	// after wraps the key for the admin alone.
	b, err = team.Leave(w.state(t), w.carol, at)
	w.add(t, b, err)
	refused(desk, "the invite of a member who left")
	b, _, err = team.Rotate(w.state(t), w.admin, ring, "", at)
	w.add(t, b, err)
	if st := w.state(t); len(st.Holders[4]) != 1 || opens(desk, 4) {
		t.Fatalf("after carol left, epoch 4 is held by %d keys", len(st.Holders[4]))
	}

	// A removal that wraps the new key for the removed member's invite
	// anyway is refused by every client.
	w2 := newWorld(t)
	b, inv, err = team.Invite(w2.state(t), w2.bob, w2.ring, "laptop", nil, true, at)
	w2.add(t, b, err)
	st = w2.state(t)
	e := st.NewEntry(team.KindRemove, st.Admin, at)
	e.Target, e.Epoch, e.Keys = w2.bob.Fingerprint(), 2, map[string][]byte{}
	for _, m := range []*team.Identity{w2.admin, w2.carol, inv} {
		e.Keys[m.Fingerprint()] = must(team.Wrap(w2.ring, m.Public("x", "").Box))
	}
	if _, err := team.Verify(teamID, w2.admin.Fingerprint(), append(w2.chain, must(team.Sign(e, w2.admin)))); !errors.Is(err, team.ErrForged) {
		t.Fatalf("a removal whose key is wrapped for the removed member's invite: %v", err)
	}
	// A chain written before these rules (an entry of version 0) still
	// verifies; the invite holds that key, and joins no more.
	e.Version = 0
	old := append(w2.chain, must(team.Sign(e, w2.admin)))
	st = must(team.Verify(teamID, w2.admin.Fingerprint(), old))
	if !st.Holders[2][inv.Fingerprint()] || st.InviteError(inv.Fingerprint(), at) == nil {
		t.Fatal("a chain of version 0's removal")
	}
}

// TestMachineTakesWhatItBroughtIn: bob's laptop invites a second
// machine, which invites a third; removing the laptop removes all
// three, revokes the third's open invite, and wraps the new key for
// none of them. A removal of version 2 (before this rule) still takes
// the laptop alone, so that the chains of before verify as they did;
// and a version-3 removal that wraps the key for a machine the laptop
// brought in is refused.
func TestMachineTakesWhatItBroughtIn(t *testing.T) {
	w := newWorld(t)
	join := func(by *team.Identity, ring team.Keyring, label string) (*team.Identity, team.Keyring) {
		t.Helper()
		b, inv, err := team.Invite(w.state(t), by, ring, label, nil, true, at)
		w.add(t, b, err)
		m := identity(t)
		b, r, err := team.Join(w.state(t), inv, m, label, "thief", at)
		w.add(t, b, err)
		return m, r
	}
	laptop, lring := join(w.bob, w.ring, "laptop")
	thiefbox, tring := join(laptop, lring, "thiefbox")
	third, _ := join(thiefbox, tring, "third")
	b, spare, err := team.Invite(w.state(t), third, tring, "spare", nil, true, at)
	w.add(t, b, err)
	st := w.state(t)
	if st.JoinedVia[thiefbox.Fingerprint()] != laptop.Fingerprint() || st.JoinedVia[laptop.Fingerprint()] != w.bob.Fingerprint() {
		t.Fatal("the chain does not say which machine invited each")
	}
	if gone := st.GoneWith(laptop.Fingerprint()); len(gone) != 3 || !gone[thiefbox.Fingerprint()] || !gone[third.Fingerprint()] || gone[w.bob.Fingerprint()] {
		t.Fatalf("the laptop goes with %d keys", len(gone))
	}

	// Version 2: the laptop alone, as before.
	old := st.NewEntry(team.KindRemove, st.Admin, at)
	old.Version, old.Target, old.Epoch, old.Keys = 2, laptop.Fingerprint(), 2, map[string][]byte{}
	for fp, m := range st.Recipients(at) {
		if fp != laptop.Fingerprint() {
			old.Keys[fp] = must(team.Wrap(w.ring, m.Box))
		}
	}
	if ost, err := team.Verify(teamID, w.admin.Fingerprint(), append(w.chain, must(team.Sign(old, w.admin)))); err != nil || len(ost.Machines) != 2 {
		t.Fatalf("a removal of version 2: %v", err)
	}
	// Version 3 wrapping for the machine the laptop brought in: refused.
	old.Version = team.EntryVersion
	if _, err := team.Verify(teamID, w.admin.Fingerprint(), append(w.chain, must(team.Sign(old, w.admin)))); !errors.Is(err, team.ErrForged) {
		t.Fatalf("a removal of the laptop wrapping its key for the machines it brought in: %v", err)
	}

	b, ring2, err := team.Rotate(st, w.admin, w.ring, laptop.Fingerprint(), at)
	w.add(t, b, err)
	st = w.state(t)
	for _, m := range []*team.Identity{laptop, thiefbox, third, spare} {
		if st.Holders[2][m.Fingerprint()] || st.In(m.Fingerprint()) {
			t.Fatalf("%s holds the key after the laptop's removal", st.Past[m.Fingerprint()].Name)
		}
	}
	if !st.Revoked[spare.Fingerprint()] || st.InviteError(spare.Fingerprint(), at) == nil {
		t.Fatal("the invite the thief's machine made still joins")
	}
	if !st.In(w.bob.Fingerprint()) || !st.Holders[2][w.bob.Fingerprint()] {
		t.Fatal("bob went with his laptop")
	}
	after := must(team.SealRecord(team.Header{Team: teamID, Host: "h9", Index: 1, Epoch: 2, Author: w.carol.Fingerprint()}, ring2, w.carol, []byte("after")))
	for _, k := range tring {
		if _, err := envelope.Open(k, after.Header, after.Body[64:]); err == nil {
			t.Fatal("the thief's machine opens what was written after the laptop's removal")
		}
	}
}
