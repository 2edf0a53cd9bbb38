package team

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/loomhq/loom"
)

// State is what a verified chain says: who is in the team, by which
// keys, from which epoch.
type State struct {
	Team  string
	Name  string
	Admin string // the admin's fingerprint
	// Members are the members now, by fingerprint.
	Members map[string]*Member
	// Joined is the seq of the entry each member (now or before)
	// joined by, by fingerprint; Left the one they left or were removed by.
	Joined, Left map[string]int64
	// Epoch is the newest epoch, and EpochAt the seq of the entry that
	// started each.
	Epoch   int
	EpochAt map[int]int64
	// Holders are, for each epoch, the fingerprints its key was wrapped
	// for: who may read and write under it.
	Holders map[int]map[string]bool
	// Invites are the invites, by fingerprint, and whether each was used.
	Invites map[string]bool
	// Expires are the invites' ends, by fingerprint (none: never);
	// Revoked the invites revoked; InviteFor the member each machine's
	// invite is for; InviteBy the key that made each invite.
	Expires   map[string]time.Time
	Revoked   map[string]bool
	InviteFor map[string]string
	InviteBy  map[string]string
	// Departed are the invites revoked by the removal or leave of the
	// member or machine that made them or that they were for, by
	// fingerprint: the seq of that entry.
	Departed map[string]int64
	// JoinedVia is, for each member and machine that joined, the key
	// that made the invite it joined by (the admin's, a member's, or a
	// machine's), by fingerprint.
	JoinedVia map[string]string
	// Machines are the members' other machines now, by fingerprint: the
	// member each belongs to. A machine holds the team's keys as its
	// member does, signs as its member, and goes with its member.
	Machines map[string]string
	// Stale is set when a member (or a machine) left, or an open invite
	// was revoked, after the newest rotation: the key of Epoch is held by
	// someone no longer in the team, and nothing is published until the
	// admin rotates.
	Stale bool
	// Seq and Head are the last entry's seq and hash; Hashes every
	// entry's hash, by seq-1 (a record names the head it was written
	// under).
	Seq    int64
	Head   string
	Hashes []string
	// Cut is the last record index of each writer id of the members and
	// machines who left, as the remove or rotate after their leaving
	// names it (Entry.Writers): the records of theirs a client applies.
	Cut map[string]int64
	// Entries are the chain's entries, in order.
	Entries []*Entry
	// Past is every member the chain named, by fingerprint (their keys
	// check records written while they were members).
	Past map[string]*Member
	// Budget is the admin's last budget entry's (zero: none); Budgets
	// fills in the defaults. Signed is what each member signed of the
	// chain, by the member's fingerprint: what the hub holds against
	// the budget of entries.
	Budget Budget
	Signed map[string]Usage
}

// ErrForged is in the chain of every refusal of a chain: an entry that
// is not signed by whom it must be, that names the wrong entry before
// it, that breaks a rule of its kind, or a genesis that is not the
// pinned admin's.
var ErrForged = errors.New("the team's membership chain is not valid")

func forged(seq int64, format string, args ...any) error {
	return fmt.Errorf("%w: entry %d: %s", ErrForged, seq, fmt.Sprintf(format, args...))
}

// Verify checks a whole chain from its genesis and returns its state.
// pinned is the admin's fingerprint the client holds (from the invite
// code, or its own key for the creator); "" takes the genesis's (the
// hub, which has nothing to pin).
func Verify(team, pinned string, chain [][]byte) (*State, error) {
	st := &State{Team: team}
	for _, b := range chain {
		if err := st.Apply(pinned, b); err != nil {
			return nil, err
		}
	}
	if st.Seq == 0 {
		return nil, loom.Errorf(loom.ENOTFOUND, "team %s has no membership chain on this hub", team)
	}
	return st, nil
}

// Apply checks the chain's next entry against st and takes it in.
func (st *State) Apply(pinned string, signed []byte) error {
	seq := st.Seq + 1
	e, s, err := Decode(signed)
	if err != nil {
		return forged(seq, "%v", err)
	}
	if e.Seq != seq {
		return forged(seq, "it says it is entry %d (re-ordered or replayed)", e.Seq)
	}
	if e.Team != st.Team {
		return forged(seq, "it is an entry of team %s", e.Team)
	}
	if e.Prev != st.Head {
		return forged(seq, "it does not follow entry %d (re-ordered, replayed or altered)", seq-1)
	}
	signer, err := st.signer(pinned, e)
	if err != nil {
		return forged(seq, "%v", err)
	}
	if !ed25519.Verify(ed25519.PublicKey(signer.Sign), append([]byte(signPrefix), s.Body...), s.Sig) {
		return forged(seq, "its signature is not %s's", e.By)
	}
	by := st.owner(e.By) // before a leave takes them out
	if err := st.take(e); err != nil {
		return forged(seq, "%v", err)
	}
	st.count(e, by, len(signed))
	st.Seq, st.Head = seq, Hash(signed)
	st.Hashes = append(st.Hashes, st.Head)
	st.Entries = append(st.Entries, e)
	return nil
}

// signer returns the keys that must have signed e, by its kind.
func (st *State) signer(pinned string, e *Entry) (*Member, error) {
	switch {
	case e.Seq == 1 && e.Kind != KindCreate:
		return nil, errors.New("the first entry is not the team's creation")
	case e.Seq != 1 && e.Kind == KindCreate:
		return nil, errors.New("a second creation")
	}
	switch e.Kind {
	case KindCreate:
		return signerCreate(pinned, e)
	case KindInvite:
		if e.Machine {
			if st.owner(e.By) == "" {
				return nil, fmt.Errorf("a machine's invite by %s, who is not a member", e.By)
			}
			return st.Past[e.By], nil
		}
		if e.By != st.Admin {
			return nil, errors.New("an invite not signed by the admin")
		}
		return st.Members[st.Admin], nil
	case KindRemove, KindRotate, KindBudget:
		if e.By != st.Admin {
			return nil, fmt.Errorf("a %s not signed by the admin", e.Kind)
		}
		return st.Members[st.Admin], nil
	case KindRevoke:
		if e.By == st.Admin {
			return st.Members[st.Admin], nil
		}
		if o := st.InviteFor[e.Target]; o != "" && st.owner(e.By) == o {
			return st.Past[e.By], nil
		}
		return nil, errors.New("a revoke not signed by the admin, nor by the member the machine's invite is for")
	case KindJoin:
		return st.signerJoin(e)
	case KindLeave, KindShare, KindUnshare:
		if st.owner(e.By) == "" {
			return nil, fmt.Errorf("a %s by %s, who is not a member", e.Kind, e.By)
		}
		return st.Past[e.By], nil
	}
	return nil, fmt.Errorf("an entry of unknown kind %q", e.Kind)
}

// signerCreate returns the admin that must have signed e, the team's
// creation: the member it names, pinned if a pin is given.
func signerCreate(pinned string, e *Entry) (*Member, error) {
	if e.Member == nil {
		return nil, errors.New("a creation without its admin")
	}
	if err := e.Member.check(); err != nil {
		return nil, err
	}
	if e.By != e.Member.Fingerprint() {
		return nil, errors.New("the creation is not signed by its admin")
	}
	if pinned != "" && e.By != pinned {
		return nil, fmt.Errorf("the team's admin is %s, not %s as pinned", e.By, pinned)
	}
	return e.Member, nil
}

// signerJoin returns the invite's keys that must have signed e, a join
// by an invite the admin made, unused, not revoked nor expired, dated
// not before the entry it follows.
func (st *State) signerJoin(e *Entry) (*Member, error) {
	if e.Invite == nil || e.By != e.Invite.Fingerprint() {
		return nil, errors.New("a join that does not name its invite")
	}
	used, ok := st.Invites[e.By]
	switch {
	case !ok:
		return nil, errors.New("a join by an invite the admin did not make")
	case used:
		return nil, errors.New("a second join with one invite")
	case st.Revoked[e.By]:
		return nil, errors.New("a join with a revoked invite")
	}
	if exp, ok := st.Expires[e.By]; ok && e.At.After(exp) {
		return nil, fmt.Errorf("a join with an invite that expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if last := st.Entries[len(st.Entries)-1]; e.At.Before(last.At.Add(-ClockSkew)) {
		return nil, fmt.Errorf("a join dated %s, before the entry it follows (a clock behind, or a join dated back)", e.At.UTC().Format(time.RFC3339))
	}
	return st.Past[e.By], nil
}

// take applies e, whose signature is checked, to st.
func (st *State) take(e *Entry) error {
	switch e.Kind {
	case KindCreate:
		return st.takeCreate(e)
	case KindInvite:
		return st.takeInvite(e)
	case KindJoin:
		return st.takeJoin(e)
	case KindRemove, KindRotate:
		return st.takeNewKey(e)
	case KindRevoke:
		return st.takeRevoke(e)
	case KindBudget:
		return st.takeBudget(e)
	case KindLeave:
		if e.By == st.Admin {
			return errors.New("the admin cannot leave")
		}
		st.depart(e.By, e.Seq, e.Version)
		st.Stale = true
	case KindShare, KindUnshare:
		if len(e.Sealed) == 0 || e.Epoch < 1 || e.Epoch > st.Epoch {
			return errors.New("a share without its sealed project")
		}
	}
	return nil
}

// takeCreate starts st from e, the team's creation.
func (st *State) takeCreate(e *Entry) error {
	if err := validName(e.Name); err != nil {
		return err
	}
	if e.Epoch != 1 || len(e.Keys) != 1 || e.Keys[e.By] == nil {
		return errors.New("a creation must wrap epoch 1's key for its admin alone")
	}
	st.Name, st.Admin = e.Name, e.By
	st.Members = map[string]*Member{e.By: e.Member}
	st.Past = map[string]*Member{e.By: e.Member}
	st.Joined = map[string]int64{e.By: e.Seq}
	st.Left = map[string]int64{}
	st.Invites = map[string]bool{}
	st.Expires, st.Revoked, st.InviteFor = map[string]time.Time{}, map[string]bool{}, map[string]string{}
	st.InviteBy, st.Departed, st.JoinedVia = map[string]string{}, map[string]int64{}, map[string]string{}
	st.Machines = map[string]string{}
	st.Holders = map[int]map[string]bool{1: {e.By: true}}
	st.Epoch, st.EpochAt = 1, map[int]int64{1: e.Seq}
	return nil
}

// newKeys checks the keys m an entry brings (what, as "an invite"),
// which without names when they are missing: whole, and never named in
// the chain before. It returns their fingerprint.
func (st *State) newKeys(m *Member, what, without string) (string, error) {
	if m == nil {
		return "", errors.New(what + " without " + without)
	}
	if err := m.check(); err != nil {
		return "", err
	}
	fp := m.Fingerprint()
	if st.Past[fp] != nil {
		return "", errors.New(what + " with keys the chain named before")
	}
	return fp, nil
}

// takeInvite adds the invite e makes to st.
func (st *State) takeInvite(e *Entry) error {
	fp, err := st.newKeys(e.Invite, "an invite", "its keys")
	if err != nil {
		return err
	}
	if len(e.Keys) != 1 || e.Keys[fp] == nil {
		return errors.New("an invite must wrap the keys for the invite alone")
	}
	st.Invites[fp] = false
	st.InviteBy[fp] = e.By
	st.Past[fp] = e.Invite
	st.Holders[st.Epoch][fp] = true
	if e.Expires != nil {
		st.Expires[fp] = *e.Expires
	}
	if e.Machine {
		st.InviteFor[fp] = st.owner(e.By)
	}
	return nil
}

// takeJoin adds the member or machine that joins by e to st.
func (st *State) takeJoin(e *Entry) error {
	fp, err := st.newKeys(e.Member, "a join", "its member")
	if err != nil {
		return err
	}
	if e.Member.User == "" {
		return errors.New("a join without the member's hub user")
	}
	owner := st.InviteFor[e.By]
	if owner == "" {
		for _, m := range st.Members {
			if m.Name == e.Member.Name {
				return fmt.Errorf("a second member named %s", m.Name)
			}
		}
	} else if st.Members[owner] == nil {
		return errors.New("a machine's join for a member no longer in the team")
	}
	if len(e.Keys) != 1 || e.Keys[fp] == nil {
		return errors.New("a join must wrap the keys for its member alone")
	}
	st.Invites[e.By] = true
	if owner == "" {
		st.Members[fp] = e.Member
	} else {
		st.Machines[fp] = owner
	}
	st.Past[fp], st.Joined[fp] = e.Member, e.Seq
	st.JoinedVia[fp] = st.InviteBy[e.By]
	st.Holders[st.Epoch][fp] = true
	return nil
}

// takeNewKey applies a removal or a rotation, e, to st: the member
// departs (on a removal) and the new epoch's key is wrapped for exactly
// who must hold it.
func (st *State) takeNewKey(e *Entry) error {
	if e.Kind == KindRemove {
		switch {
		case st.Machines[e.Target] != "":
		case e.Target == st.Admin || st.Members[e.Target] == nil:
			return fmt.Errorf("a removal of %s, who is not a member the admin can remove", e.Target)
		}
		st.depart(e.Target, e.Seq, e.Version)
	}
	if e.Epoch != st.Epoch+1 {
		return fmt.Errorf("a new key for epoch %d after epoch %d", e.Epoch, st.Epoch)
	}
	holders := map[string]bool{}
	for fp := range st.Recipients(e.At) {
		if e.Keys[fp] == nil {
			return fmt.Errorf("the new key is not wrapped for %s", fp)
		}
		holders[fp] = true
	}
	for fp := range e.Keys {
		// A chain written before a departure revoked its invites
		// wrapped the key for them too: it still verifies, and says
		// they held it.
		if e.Version < versionRevokes && !holders[fp] && st.Departed[fp] != 0 {
			holders[fp] = true
		}
	}
	if len(e.Keys) != len(holders) {
		return errors.New("the new key must be wrapped for the members, their machines and the open invites and no one else")
	}
	st.Epoch = e.Epoch
	st.EpochAt[e.Epoch] = e.Seq
	st.Holders[e.Epoch] = holders
	st.Stale = false
	if st.Cut == nil {
		st.Cut = map[string]int64{}
	}
	for host, last := range e.Writers {
		if _, ok := st.Cut[host]; !ok && last >= 0 {
			st.Cut[host] = last
		}
	}
	return nil
}

// takeRevoke revokes the open invite e names.
func (st *State) takeRevoke(e *Entry) error {
	used, ok := st.Invites[e.Target]
	if !ok || used || st.Revoked[e.Target] {
		return fmt.Errorf("a revoke of %s, which is no open invite", e.Target)
	}
	st.Revoked[e.Target] = true
	if st.Holders[st.Epoch][e.Target] {
		st.Stale = true
	}
	return nil
}

// ClockSkew is how much earlier than the entry before it a join may be
// dated: the members' clocks differ.
const ClockSkew = 10 * time.Minute

// depart takes fp out of the team at entry seq, an entry of the rules
// of version: a machine alone (with, from version 3, the machines that
// joined through its invites), or a member with every machine of
// theirs; and revokes every invite not used that any of them made or
// that is for them (a machine's invite of the member), so that no key
// of theirs, and no code they hold, opens or joins anything after.
func (st *State) depart(fp string, seq int64, version int) {
	gone := st.goneWith(fp, version)
	invites := st.invitesOf(gone)
	for g := range gone {
		delete(st.Members, g)
		delete(st.Machines, g)
		st.Left[g] = seq
	}
	for inv := range invites {
		st.Revoked[inv] = true
		st.Departed[inv] = seq
	}
}

// goneWith returns who leaves the team with fp under the rules of
// version: fp, and every machine of theirs when fp is a member; from
// version 3 also every machine now in the team that joined through an
// invite one of those made, and so on: a machine leaves with everything
// it brought in.
func (st *State) goneWith(fp string, version int) map[string]bool {
	gone := map[string]bool{fp: true}
	if st.Machines[fp] == "" {
		for m, o := range st.Machines {
			if o == fp {
				gone[m] = true
			}
		}
	}
	for version >= versionTakesInvited {
		more := false
		for m := range st.Machines {
			if !gone[m] && gone[st.JoinedVia[m]] {
				gone[m], more = true, true
			}
		}
		if !more {
			break
		}
	}
	return gone
}

// GoneWith returns who a removal of fp written now takes out of the
// team, by fingerprint: fp, their machines when fp is a member, and the
// machines that joined through the invites of any of them.
func (st *State) GoneWith(fp string) map[string]bool { return st.goneWith(fp, EntryVersion) }

// invitesOf returns the invites neither used nor revoked that any of
// gone made or that are for one of them.
func (st *State) invitesOf(gone map[string]bool) map[string]*Member {
	out := map[string]*Member{}
	for inv, used := range st.Invites {
		if !used && !st.Revoked[inv] && (gone[st.InviteBy[inv]] || gone[st.InviteFor[inv]]) {
			out[inv] = st.Past[inv]
		}
	}
	return out
}
