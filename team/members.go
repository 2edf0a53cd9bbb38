package team

import (
	"slices"
	"time"
)

// Recipients are who a new epoch's key made at at is wrapped for: every
// member and each of their machines, and every invite not used,
// revoked or expired at at (whose join then carries the new key).
func (st *State) Recipients(at time.Time) map[string]*Member {
	out := make(map[string]*Member, len(st.Members)+len(st.Machines)+len(st.Invites))
	for fp, m := range st.Members {
		out[fp] = m
	}
	for fp := range st.Machines {
		out[fp] = st.Past[fp]
	}
	for fp := range st.OpenInvites(at) {
		out[fp] = st.Past[fp]
	}
	return out
}

// OpenInvites are the invites that can still join at at, by fingerprint.
func (st *State) OpenInvites(at time.Time) map[string]*Member {
	out := map[string]*Member{}
	for fp, used := range st.Invites {
		if exp, ok := st.Expires[fp]; used || st.Revoked[fp] || ok && at.After(exp) {
			continue
		}
		out[fp] = st.Past[fp]
	}
	return out
}

// ExpiredHolder reports whether the newest key is wrapped for an invite
// that expired unused by now: the admin's next sync rotates it away.
func (st *State) ExpiredHolder(now time.Time) bool {
	for fp := range st.Holders[st.Epoch] {
		if exp, ok := st.Expires[fp]; ok && !st.Invites[fp] && !st.Revoked[fp] && now.After(exp) {
			return true
		}
	}
	return false
}

// In reports whether fp is the key of a member in the team now, or of
// one of their machines.
func (st *State) In(fp string) bool { return st.owner(fp) != "" }

// owner returns the member fp is (fp) or is a machine of, while they
// are in the team; "" for anyone else.
func (st *State) owner(fp string) string {
	if st.Members[fp] != nil {
		return fp
	}
	if o := st.Machines[fp]; o != "" && st.Members[o] != nil {
		return o
	}
	return ""
}

// MemberOf returns the member the key fp is of, now or before (a
// machine's is its member's), or nil.
func (st *State) MemberOf(fp string) *Member {
	if o := st.owner(fp); o != "" {
		return st.Members[o]
	}
	for m, o := range st.machinesEver() {
		if m == fp {
			return st.Past[o]
		}
	}
	return st.Past[fp]
}

// machinesEver returns every machine the chain added, now or before,
// with its member.
func (st *State) machinesEver() map[string]string {
	out := map[string]string{}
	for _, e := range st.Entries {
		if e.Kind == KindJoin && e.Member != nil {
			if o := st.InviteFor[e.By]; o != "" {
				out[e.Member.Fingerprint()] = o
			}
		}
	}
	return out
}

// MachinesOf returns the other machines of member fp now, by
// fingerprint.
func (st *State) MachinesOf(fp string) map[string]*Member {
	out := map[string]*Member{}
	for m, o := range st.Machines {
		if o == fp {
			out[m] = st.Past[m]
		}
	}
	return out
}

// Departing returns the invites the removal or leave of fp revokes with
// it, by fingerprint.
func (st *State) Departing(fp string) map[string]*Member {
	return st.invitesOf(st.goneWith(fp, EntryVersion))
}

// MemberNamed returns the member now in the team with name, or nil.
func (st *State) MemberNamed(name string) *Member {
	for _, m := range st.Members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// SortedMembers returns the members, the admin first, then by name.
func (st *State) SortedMembers() []*Member {
	out := make([]*Member, 0, len(st.Members))
	for _, m := range st.Members {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Member) int {
		switch {
		case a.Fingerprint() == st.Admin:
			return -1
		case b.Fingerprint() == st.Admin:
			return 1
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}
