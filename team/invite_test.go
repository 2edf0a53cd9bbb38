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
