package team

import (
	"errors"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
)

// The changes a client makes: each returns the next signed entry of the
// chain st has verified, to append on the hub at st.Seq+1.

// Create makes a team's genesis: the admin's keys (id, under name and
// hub user) and epoch 1's key wrapped for them. It returns the entry and
// the keyring.
func Create(teamID, teamName, name, user string, id *Identity, at time.Time) ([]byte, Keyring, error) {
	if err := ValidName(teamName); err != nil {
		return nil, nil, err
	}
	if err := ValidName(name); err != nil {
		return nil, nil, err
	}
	key, err := envelope.NewKey()
	if err != nil {
		return nil, nil, err
	}
	ring := Keyring{1: key}
	me := id.Public(name, user)
	w, err := Wrap(ring, me.Box)
	if err != nil {
		return nil, nil, err
	}
	st := &State{Team: teamID}
	e := st.NewEntry(KindCreate, me.Fingerprint(), at)
	e.Name, e.Member, e.Epoch, e.Keys = teamName, me, 1, map[string][]byte{me.Fingerprint(): w}
	b, err := Sign(e, id)
	return b, ring, err
}

// Invite makes an invite: a new key pair whose public part the signer
// names, with the keyring wrapped to it. The private part goes in the
// invite code. Only the admin invites a new member; with machine set,
// any member (by any of their machines) invites another machine of
// their own. expires (nil: never) is when the invite stops joining.
func Invite(st *State, by *Identity, ring Keyring, label string, expires *time.Time, machine bool, at time.Time) ([]byte, *Identity, error) {
	switch {
	case machine && st.owner(by.Fingerprint()) == "":
		return nil, nil, loom.Errorf(loom.EINVALID, "you are not a member of team %s", st.Name)
	case !machine && by.Fingerprint() != st.Admin:
		return nil, nil, loom.Errorf(loom.EINVALID, "only the team's admin (%s) invites members; invite another machine of yours with --machine", st.Admin)
	}
	if err := ValidName(label); err != nil {
		return nil, nil, err
	}
	inv, err := NewIdentity()
	if err != nil {
		return nil, nil, err
	}
	pub := inv.Public(label, "")
	w, err := Wrap(ring, pub.Box)
	if err != nil {
		return nil, nil, err
	}
	e := st.NewEntry(KindInvite, by.Fingerprint(), at)
	e.Invite, e.Keys, e.Machine = pub, map[string][]byte{pub.Fingerprint(): w}, machine
	if expires != nil {
		t := expires.UTC().Truncate(time.Millisecond)
		e.Expires = &t
	}
	b, err := Sign(e, by)
	return b, inv, err
}

// InviteError says why invite ifp cannot join at at ("" when it can).
func (st *State) InviteError(ifp string, at time.Time) error {
	used, ok := st.Invites[ifp]
	switch {
	case !ok:
		return loom.Errorf(loom.ENOTFOUND, "the team's chain holds no such invite: it was not made on this hub, or not for this team")
	case used:
		return loom.Errorf(loom.EINVALID, "this invite was used already: ask the admin for another (loom team invite)")
	case st.Departed[ifp] != 0:
		return loom.Errorf(loom.EINVALID, "this invite was revoked when the member or machine that made it, or that it was for, left the team or was removed (entry %d)", st.Departed[ifp])
	case st.Revoked[ifp]:
		return loom.Errorf(loom.EINVALID, "this invite was revoked: ask the admin for another (loom team invite)")
	}
	if exp, ok := st.Expires[ifp]; ok && at.After(exp) {
		return loom.Errorf(loom.EINVALID, "this invite expired on %s: ask the admin for another (loom team invite)", exp.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return nil
}

// Join uses an invite: the keyring wrapped to the invite is opened and
// wrapped again for the member (me, under name and hub user), in an
// entry the invite's key signs. With a machine's invite, me joins as
// another machine of the member who made it, name being the machine's.
// It returns the entry and the keyring.
func Join(st *State, inv, me *Identity, name, user string, at time.Time) ([]byte, Keyring, error) {
	if err := ValidName(name); err != nil {
		return nil, nil, err
	}
	ifp := inv.Fingerprint()
	if err := st.InviteError(ifp, at); err != nil {
		return nil, nil, err
	}
	if last := st.Entries[len(st.Entries)-1]; at.Before(last.At.Add(-ClockSkew)) {
		return nil, nil, loom.Errorf(loom.EINVALID, "this machine's clock (%s) is more than %s behind the team's last change (%s): set it right, then join", at.UTC().Format(time.RFC3339), ClockSkew, last.At.UTC().Format(time.RFC3339))
	}
	if st.InviteFor[ifp] == "" && st.MemberNamed(name) != nil {
		return nil, nil, loom.Errorf(loom.EINVALID, "the team has a member named %s already: join under another name (--name)", name)
	}
	ring, err := openRing(st, inv)
	if err != nil {
		return nil, nil, err
	}
	pub := me.Public(name, user)
	w, err := Wrap(ring, pub.Box)
	if err != nil {
		return nil, nil, err
	}
	e := st.NewEntry(KindJoin, ifp, at)
	e.Invite, e.Member, e.Keys = st.Past[ifp], pub, map[string][]byte{pub.Fingerprint(): w}
	b, err := Sign(e, inv)
	return b, ring, err
}

// Rotate makes a new epoch's key, wrapped for the members, their
// machines and the open invites only; with target set, it removes that
// member (and their machines), or that one machine, in the same entry.
func Rotate(st *State, admin *Identity, ring Keyring, target string, at time.Time) ([]byte, Keyring, error) {
	return RotateCut(st, admin, ring, target, nil, at)
}

// RotateCut is Rotate naming in the entry what the members and machines
// who left wrote before (Entry.Writers: the last index of each of their
// writer ids).
func RotateCut(st *State, admin *Identity, ring Keyring, target string, writers map[string]int64, at time.Time) ([]byte, Keyring, error) {
	if admin.Fingerprint() != st.Admin {
		return nil, nil, loom.Errorf(loom.EINVALID, "only the team's admin (%s) removes members and rotates the key", st.Admin)
	}
	kind := KindRotate
	if target != "" {
		if target == st.Admin || st.Members[target] == nil && st.Machines[target] == "" {
			return nil, nil, loom.Errorf(loom.ENOTFOUND, "%s is not a member the admin can remove", target)
		}
		kind = KindRemove
	}
	key, err := envelope.NewKey()
	if err != nil {
		return nil, nil, err
	}
	nring := make(Keyring, len(ring)+1)
	for e, k := range ring {
		nring[e] = k
	}
	nring[st.Epoch+1] = key
	e := st.NewEntry(kind, st.Admin, at)
	e.Target, e.Epoch, e.Keys, e.Writers = target, st.Epoch+1, map[string][]byte{}, writers
	to := st.Recipients(e.At)
	if target != "" {
		for fp := range st.goneWith(target, EntryVersion) {
			delete(to, fp)
		}
		for fp := range st.Departing(target) {
			delete(to, fp)
		}
	}
	for fp, m := range to {
		w, err := Wrap(nring, m.Box)
		if err != nil {
			return nil, nil, err
		}
		e.Keys[fp] = w
	}
	b, err := Sign(e, admin)
	return b, nring, err
}

// Revoke revokes an open invite: the admin any, a member the invites of
// their own machines. The team is then stale until the admin rotates
// (loom team invite --revoke does it at once on the admin's machine).
func Revoke(st *State, me *Identity, target string, at time.Time) ([]byte, error) {
	fp := me.Fingerprint()
	if fp != st.Admin && (st.InviteFor[target] == "" || st.owner(fp) != st.InviteFor[target]) {
		return nil, loom.Errorf(loom.EINVALID, "only the team's admin (%s) revokes an invite, or the member whose machine it was for", st.Admin)
	}
	used, ok := st.Invites[target]
	if !ok || used || st.Revoked[target] {
		return nil, loom.Errorf(loom.ENOTFOUND, "%s is no open invite of team %s", target, st.Name)
	}
	e := st.NewEntry(KindRevoke, fp, at)
	e.Target = target
	return Sign(e, me)
}

// Leave is a member's own leaving.
func Leave(st *State, me *Identity, at time.Time) ([]byte, error) {
	fp := me.Fingerprint()
	switch {
	case st.owner(fp) == "":
		return nil, loom.Errorf(loom.ENOTFOUND, "you are not a member of team %s", st.Name)
	case fp == st.Admin:
		return nil, loom.Errorf(loom.EINVALID, "the admin cannot leave the team")
	}
	return Sign(st.NewEntry(KindLeave, fp, at), me)
}

// Share names a project one member shares (or, with mode "", stops
// sharing), sealed under the newest key.
func Share(st *State, me *Identity, ring Keyring, p Project, at time.Time) ([]byte, error) {
	fp := me.Fingerprint()
	if st.owner(fp) == "" {
		return nil, loom.Errorf(loom.ENOTFOUND, "you are not a member of team %s", st.Name)
	}
	epoch, sealed, err := SealProject(st.Team, ring, p)
	if err != nil {
		return nil, err
	}
	kind := KindShare
	if p.Mode == "" {
		kind = KindUnshare
	}
	e := st.NewEntry(kind, fp, at)
	e.Epoch, e.Sealed = epoch, sealed
	return Sign(e, me)
}

// Keys opens the keyring the chain wraps for id: the newest entry that
// wraps keys for it (its join, or a later rotation).
func Keys(st *State, id *Identity) (Keyring, error) {
	return openRing(st, id)
}

func openRing(st *State, id *Identity) (Keyring, error) {
	fp := id.Fingerprint()
	for i := len(st.Entries) - 1; i >= 0; i-- {
		if w := st.Entries[i].Keys[fp]; w != nil {
			return Unwrap(w, id)
		}
	}
	return nil, errors.New("the team's chain wraps no key for this key pair")
}
