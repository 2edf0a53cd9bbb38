package teamrun

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom/team"
)

// Verified is a team's chain as this machine verified it just now.
type Verified struct {
	*team.State
	Local *State
	Me    *team.Identity
	// Pinned is the admin's fingerprint the chain was checked against.
	Pinned string
}

// Shared is one project shared in the team: by whom, and how.
type Shared struct {
	Member  string
	Project team.Project
}

// Shares returns the projects the members share now, as the chain says
// (each member's latest share or unshare of each project).
func (v *Verified) Shares() []Shared {
	type key struct{ by, project string }
	last := map[key]Shared{}
	var order []key
	for _, e := range v.Entries {
		if e.Kind != team.KindShare && e.Kind != team.KindUnshare {
			continue
		}
		p, err := team.OpenProject(v.Local.Keys, e)
		if err != nil {
			continue
		}
		k := key{"", p.ID}
		m := v.MemberOf(e.By)
		k.by = m.Fingerprint()
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = Shared{Member: m.Name, Project: p}
	}
	var out []Shared
	for _, k := range order {
		if sh := last[k]; sh.Project.Mode != "" && v.Members[k.by] != nil {
			out = append(out, sh)
		}
	}
	return out
}

// InviteInfo is one invite of the team, as the chain says.
type InviteInfo struct {
	Label       string `json:"label"`
	Fingerprint string `json:"fingerprint"`
	By          string `json:"by"`
	// MadeBy is the key that made it: the member's name, or
	// MEMBER/MACHINE when one of their other machines made it.
	MadeBy string    `json:"made_by"`
	Made   time.Time `json:"made"`
	// Joined names who joined by it (a used invite).
	Joined  string     `json:"joined,omitempty"`
	Expires *time.Time `json:"expires,omitempty"`
	// MachineOf names the member a machine's invite is for ("" for a
	// member's invite).
	MachineOf string `json:"machine_of,omitempty"`
	// State is "open", "used", "revoked" or "expired".
	State string `json:"state"`
}

// Invites returns the team's invites, oldest first, with their state at
// now.
func (v *Verified) Invites(now time.Time) []InviteInfo {
	var out []InviteInfo
	for _, e := range v.Entries {
		if e.Kind != team.KindInvite || e.Invite == nil {
			continue
		}
		fp := e.Invite.Fingerprint()
		in := InviteInfo{Label: e.Invite.Name, Fingerprint: fp, By: v.MemberOf(e.By).Name, MadeBy: v.KeyName(e.By), Made: e.At, Expires: e.Expires, State: "open"}
		for joiner, via := range v.JoinedVia {
			if via == e.By && v.joinedBy(joiner) == fp {
				in.Joined = v.KeyName(joiner)
			}
		}
		if o := v.InviteFor[fp]; o != "" {
			in.MachineOf = v.Past[o].Name
		}
		switch {
		case v.State.Invites[fp]:
			in.State = "used"
		case v.Revoked[fp]:
			in.State = "revoked"
		case e.Expires != nil && now.After(*e.Expires):
			in.State = "expired"
		}
		out = append(out, in)
	}
	return out
}

// Holders are who the newest key is wrapped for, by name: the members,
// their machines (MEMBER/MACHINE) and the open invites (their labels).
type Holders struct {
	Members  []string `json:"members"`
	Machines []string `json:"machines"`
	Invites  []string `json:"invites"`
}

// Keys is how many keys the newest key is wrapped for.
func (h Holders) Keys() int { return len(h.Members) + len(h.Machines) + len(h.Invites) }

// String says how many keys of whom: "4 keys: 2 members (alice, bob),
// 1 machine (bob/laptop), 1 open invite (invite-9)".
func (h Holders) String() string {
	var parts []string
	for _, g := range []struct {
		names []string
		one   string
	}{{h.Members, "member"}, {h.Machines, "machine"}, {h.Invites, "open invite"}} {
		if len(g.names) == 0 {
			continue
		}
		p := fmt.Sprintf("%d %ss (%s)", len(g.names), g.one, strings.Join(g.names, ", "))
		if len(g.names) == 1 {
			p = fmt.Sprintf("1 %s (%s)", g.one, g.names[0])
		}
		parts = append(parts, p)
	}
	return fmt.Sprintf("%d keys: %s", h.Keys(), strings.Join(parts, ", "))
}

// KeyHolders returns who the newest key is wrapped for.
func (v *Verified) KeyHolders() Holders {
	h := Holders{Members: []string{}, Machines: []string{}, Invites: []string{}}
	for fp := range v.Holders[v.Epoch] {
		switch {
		case v.Members[fp] != nil:
			h.Members = append(h.Members, v.Members[fp].Name)
		case v.Machines[fp] != "":
			h.Machines = append(h.Machines, v.MemberOf(fp).Name+"/"+v.Past[fp].Name)
		case v.isInvite(fp):
			h.Invites = append(h.Invites, v.Past[fp].Name)
		case v.Past[fp] != nil:
			// A key of someone gone, until the admin rotates.
			h.Members = append(h.Members, v.Past[fp].Name+" (gone)")
		}
	}
	slices.Sort(h.Members)
	slices.Sort(h.Machines)
	slices.Sort(h.Invites)
	return h
}

func (v *Verified) isInvite(fp string) bool {
	_, ok := v.State.Invites[fp]
	return ok
}

// RevokedBy returns the labels of the invites the entry seq revoked as
// its member or machine went (a remove or a leave).
func (v *Verified) RevokedBy(seq int64) []string {
	out := []string{}
	for fp, at := range v.Departed {
		if at == seq {
			out = append(out, v.Past[fp].Name)
		}
	}
	slices.Sort(out)
	return out
}

// KeyName names the key fp as loom team members shows it: a member's
// name, MEMBER/MACHINE for one of their other machines, an invite's
// label.
func (v *Verified) KeyName(fp string) string {
	m := v.Past[fp]
	if m == nil {
		return fp
	}
	if o := v.MemberOf(fp); o != nil && o.Fingerprint() != fp && !v.isInvite(fp) {
		return o.Name + "/" + m.Name
	}
	return m.Name
}

// BroughtIn returns, as MEMBER/MACHINE and sorted, the machines that a
// removal of fp takes out of the team besides fp and, when fp is a
// member, the machines of theirs: those that joined through an invite
// fp made, or one of them made, and so on.
func (v *Verified) BroughtIn(fp string) []string {
	own := v.MachinesOf(fp)
	var out []string
	for g := range v.GoneWith(fp) {
		if g != fp && own[g] == nil {
			out = append(out, v.KeyName(g))
		}
	}
	slices.Sort(out)
	return out
}

// joinedBy returns the invite the member or machine fp joined by.
func (v *Verified) joinedBy(fp string) string {
	for _, e := range v.Entries {
		if e.Kind == team.KindJoin && e.Member != nil && e.Member.Fingerprint() == fp {
			return e.By
		}
	}
	return ""
}

// RemovedWith returns, as MEMBER/MACHINE and sorted, the machines the
// entry seq (a remove or a leave of fp) took out of the team besides fp
// and fp's own machines: those fp, or one of them, brought in.
func (v *Verified) RemovedWith(seq int64, fp string) []string {
	out := []string{}
	for g, at := range v.Left {
		if at == seq && g != fp && v.machineOf(g) != fp {
			out = append(out, v.KeyName(g))
		}
	}
	slices.Sort(out)
	return out
}

// machineOf returns the member the machine fp was added for, now or
// before ("" for a member).
func (v *Verified) machineOf(fp string) string {
	for _, e := range v.Entries {
		if e.Kind == team.KindJoin && e.Member != nil && e.Member.Fingerprint() == fp {
			return v.InviteFor[e.By]
		}
	}
	return ""
}
