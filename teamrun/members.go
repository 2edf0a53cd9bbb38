package teamrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/team"
)

// Client is a member's client of its teams: it runs the team's
// operations (create, join, invite, share, sync, …) against the hub with
// the member's token, and keeps the teams' state where this machine keeps
// its teams. It holds the clock the operations date with.
type Client struct {
	Local Local
	// Token is the member's token on the hub (its user is the member's
	// hub user).
	Token string
	// KeepToken makes Create and Join keep Token in the team's state
	// (State.Token), for the team's later commands on this machine.
	KeepToken bool
	// HTTP is the client of the hub's calls (nil: http.DefaultClient).
	HTTP *http.Client
	Now  func() time.Time
	// put, when set, stores records instead of the hub (tests).
	put func(ctx context.Context, team string, recs []team.Record) error
}

func (e *Client) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e *Client) client(hubURL string) *hub.Client {
	return &hub.Client{URL: hubURL, Token: e.Token, HTTP: e.HTTP}
}

// ErrGone is in the chain of Verify's error when the hub no longer
// serves the chain to this member: it does to members only.
var ErrGone = loom.Errorf(loom.ENOTFOUND, "the hub no longer serves you its chain (it does to members only): you left or were removed, or the team is gone from the hub; nothing was read or sent")

// hubUser returns the user the token is of, as the hub answers it.
func (e *Client) hubUser(ctx context.Context, hubURL string) (string, error) {
	st, err := e.client(hubURL).State(ctx)
	if err != nil {
		return "", err
	}
	return st.User, nil
}

// Create makes a team on the hub: this member's key pair (made on first
// use) becomes its admin's.
func (e *Client) Create(ctx context.Context, hubURL, teamName, me string) (*Verified, error) {
	if err := team.ValidName(teamName); err != nil {
		return nil, err
	}
	id, _, err := e.Local.Identity()
	if err != nil {
		return nil, err
	}
	user, err := e.hubUser(ctx, hubURL)
	if err != nil {
		return nil, err
	}
	if me == "" {
		me = user
	}
	tid, err := team.NewTeamID()
	if err != nil {
		return nil, err
	}
	b, ring, err := team.Create(tid, teamName, me, user, id, e.now())
	if err != nil {
		return nil, err
	}
	if err := e.client(hubURL).AppendTeamEntry(ctx, tid, 1, b); err != nil {
		return nil, err
	}
	s := &State{ID: tid, Name: teamName, Hub: hubURL, Admin: id.Fingerprint(), Me: me, Keys: ring}
	if e.KeepToken {
		s.Token = e.Token
	}
	if err := e.Local.Save(s); err != nil {
		return nil, err
	}
	return e.Verify(ctx, s)
}

// Verify reads the team's chain from the hub and verifies it against
// the pinned admin and against what this machine verified before; it
// takes in the keys the chain wraps for this member. With this
// machine's checkpoint of the chain it verified last (checkpointed), it
// reads only the entries from that head on and checks each against the
// checkpoint; otherwise, or when the hub's chain does not hold that head,
// it reads the whole chain and verifies it from its genesis.
func (e *Client) Verify(ctx context.Context, s *State) (*Verified, error) {
	id, _, err := e.Local.Identity()
	if err != nil {
		return nil, err
	}
	st, kept, err := e.checkpointed(ctx, s)
	if st == nil && err == nil {
		st, err = e.verifyWhole(ctx, s)
	}
	if err != nil {
		return nil, err
	}
	if st.Seq != kept {
		// The head goes first and comes back after the checkpoint: a
		// head file never names a checkpoint it was not written with.
		_ = os.Remove(e.Local.headFile(s.ID))
		if b, err := st.MarshalCheckpoint(); err == nil {
			if err := team.WriteSecret(e.Local.checkpointFile(s.ID), b); err != nil {
				slog.Warn("team: keep the chain's checkpoint", "team", s.Name, "err", err)
			} else if err := e.Local.keepHead(st, int64(len(b))); err != nil {
				slog.Warn("team: keep the chain's head", "team", s.Name, "err", err)
			}
		}
	} else if e.Local.keptHead(&State{ID: s.ID, Admin: s.Admin, Seq: st.Seq, Head: st.Head}) == nil {
		// A checkpoint kept before its head was: the one just read.
		if fi, err := os.Stat(e.Local.checkpointFile(s.ID)); err == nil {
			if err := e.Local.keepHead(st, fi.Size()); err != nil {
				slog.Warn("team: keep the chain's head", "team", s.Name, "err", err)
			}
		}
	}
	s.Seq, s.Head, s.Name = st.Seq, st.Head, st.Name
	fp := id.Fingerprint()
	if st.In(fp) {
		ring, err := team.Keys(st, id)
		if err != nil {
			return nil, err
		}
		for ep, k := range ring {
			s.Keys[ep] = k
		}
		s.Me = st.MemberOf(fp).Name
		if st.Machines[fp] != "" {
			s.Machine = st.Past[fp].Name
		}
	} else if _, was := st.Left[fp]; was {
		s.Gone = true
	}
	if err := e.Local.Save(s); err != nil {
		return nil, err
	}
	return &Verified{State: st, Local: s, Me: id, Pinned: s.Admin}, nil
}

// Head returns the head of the team's chain as Verify would: when the
// hub's chain still ends at the entry this machine verified last (its
// hash the head kept beside the checkpoint), that head, without reading
// the checkpoint; otherwise (an entry after it, the chain rolled back
// or rewritten, no head kept, any error) what Verify returns, which says
// what is wrong as before.
func (e *Client) Head(ctx context.Context, s *State) (*Head, error) {
	if h := e.Local.keptHead(s); h != nil {
		if es, err := e.chainAfter(ctx, s, s.Seq-1); err == nil && len(es) == 1 && team.Hash(es[0]) == s.Head {
			return h, nil
		}
	}
	v, err := e.Verify(ctx, s)
	if err != nil {
		return nil, err
	}
	return &Head{Team: v.Team, Admin: v.Admin, Name: v.Name, Seq: v.Seq, Head: v.State.Head, Epoch: v.Epoch}, nil
}

// Invite makes a one-time invite and returns its code: for a new
// member (the admin), or with machine set for another machine of this
// member. It expires after ttl (0: never).
func (e *Client) Invite(ctx context.Context, s *State, label string, ttl time.Duration, machine bool) (*team.Code, error) {
	v, err := e.Verify(ctx, s)
	if err != nil {
		return nil, err
	}
	if label == "" {
		label = fmt.Sprintf("invite-%d", v.Seq+1)
		if machine {
			label = fmt.Sprintf("machine-%d", v.Seq+1)
		}
	}
	var exp *time.Time
	if ttl > 0 {
		t := e.now().Add(ttl)
		exp = &t
	}
	b, inv, err := team.Invite(v.State, v.Me, s.Keys, label, exp, machine, e.now())
	if err != nil {
		return nil, err
	}
	if err := e.client(s.Hub).AppendTeamEntry(ctx, s.ID, v.Seq+1, b); err != nil {
		return nil, err
	}
	return &team.Code{Hub: s.Hub, Team: s.ID, Name: v.Name, Admin: v.Admin, Invite: inv.Marshal()}, nil
}

// InviteRef returns the fingerprint of the invite ref names: its code,
// its fingerprint (or the first 4 groups of it), or its label.
func InviteRef(st *team.State, ref string) (string, error) {
	if strings.HasPrefix(strings.TrimSpace(ref), "loomteam1-") {
		_, inv, err := team.ParseCode(ref)
		if err != nil {
			return "", err
		}
		return inv.Fingerprint(), nil
	}
	var found []string
	for fp := range st.Invites {
		if fp == ref || len(ref) >= 9 && strings.HasPrefix(fp, ref) || st.Past[fp].Name == ref {
			found = append(found, fp)
		}
	}
	switch len(found) {
	case 0:
		return "", loom.Errorf(loom.ENOTFOUND, "no invite %q in team %s (loom team invites lists them)", ref, st.Name)
	case 1:
		return found[0], nil
	}
	return "", loom.Errorf(loom.EAMBIGUOUS, "%q names %d invites: give its fingerprint (loom team invites lists them)", ref, len(found))
}

// Revoke revokes the open invite ref names (InviteRef); on the admin's
// machine the team's key is rotated at once, so that the invite's key
// opens nothing written after.
func (e *Client) Revoke(ctx context.Context, s *State, ref string) (*team.Member, *Verified, error) {
	v, err := e.Verify(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	fp, err := InviteRef(v.State, ref)
	if err != nil {
		return nil, nil, err
	}
	b, err := team.Revoke(v.State, v.Me, fp, e.now())
	if err != nil {
		return nil, nil, err
	}
	if err := e.client(s.Hub).AppendTeamEntry(ctx, s.ID, v.Seq+1, b); err != nil {
		return nil, nil, err
	}
	if v, err = e.Verify(ctx, s); err != nil {
		return nil, nil, err
	}
	if v.Stale && v.Me.Fingerprint() == v.Admin {
		if v, err = e.rotate(ctx, v); err != nil {
			return nil, nil, err
		}
	}
	return v.Past[fp], v, nil
}

// Join uses an invite code: it verifies the team's chain against the
// admin the code names, and joins under name (default the hub user),
// through hubURL when set (another process of the same hub) instead of
// the code's.
// An invite that is used, revoked or expired is refused before anything
// is sent. A machine's invite joins this machine as another machine of
// the member who made it, under name (default the invite's label).
// confirm is shown the team's name, the admin's fingerprint and, for a
// machine's invite, whose machine this becomes, before the join is
// sent, and may refuse it.
func (e *Client) Join(ctx context.Context, code, name, hubURL string, confirm func(teamName, admin, machineOf string) error) (*Verified, error) {
	c, inv, err := team.ParseCode(code)
	if err != nil {
		return nil, err
	}
	if hubURL != "" {
		c.Hub = hubURL
	}
	if old, err := e.Local.load(c.Team); err == nil && !old.Gone {
		return nil, loom.Errorf(loom.EINVALID, "this machine is in team %s already", old.Name)
	}
	user, err := e.hubUser(ctx, c.Hub)
	if err != nil {
		return nil, err
	}
	s := &State{ID: c.Team, Name: c.Name, Hub: c.Hub, Admin: c.Admin, Keys: team.Keyring{}}
	if e.KeepToken {
		s.Token = e.Token
	}
	chain, err := e.client(c.Hub).TeamChainInvite(ctx, c.Team, user, inv)
	if err != nil {
		// The hub says why an invite's holder may not read the chain
		// (used, revoked, expired), as the chain would.
		return nil, fmt.Errorf("team %s: %w; not joined", c.Name, err)
	}
	st, err := team.Verify(c.Team, c.Admin, chain)
	if err != nil {
		return nil, fmt.Errorf("team %s: %w; not joined", c.Name, err)
	}
	ifp := inv.Fingerprint()
	if err := st.InviteError(ifp, e.now()); err != nil {
		return nil, fmt.Errorf("team %s: %w; not joined", st.Name, err)
	}
	machineOf := ""
	if o := st.InviteFor[ifp]; o != "" {
		machineOf = st.Past[o].Name
		if name == "" {
			name = st.Past[ifp].Name
		}
	}
	if name == "" {
		name = user
	}
	if confirm != nil {
		if err := confirm(st.Name, st.Admin, machineOf); err != nil {
			return nil, err
		}
	}
	me, _, err := e.Local.Identity()
	if err != nil {
		return nil, err
	}
	b, ring, err := team.Join(st, inv, me, name, user, e.now())
	if err != nil {
		return nil, err
	}
	if err := e.client(c.Hub).AppendTeamEntry(ctx, c.Team, st.Seq+1, b); err != nil {
		return nil, err
	}
	s.Keys, s.Me = ring, name
	if err := e.Local.Save(s); err != nil {
		return nil, err
	}
	return e.Verify(ctx, s)
}

// Remove removes the member named ref (a name or fingerprint) and
// rotates the team's key for the others. confirm, when set, is shown
// the machines that go with it (MEMBER/MACHINE: those that joined
// through its invites, and theirs in turn) when there are any, before
// anything is sent, and may refuse.
func (e *Client) Remove(ctx context.Context, s *State, ref string, confirm func(with []string) error) (*team.Member, *Verified, error) {
	v, err := e.Verify(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	m := v.MemberNamed(ref)
	if m == nil {
		m = v.Members[ref]
	}
	for fp := range v.Machines {
		if fp == ref || v.MemberOf(fp).Name+"/"+v.Past[fp].Name == ref {
			m = v.Past[fp]
		}
	}
	if m == nil {
		return nil, nil, loom.Errorf(loom.ENOTFOUND, "no member %q in team %s (a machine is MEMBER/MACHINE, as loom team members shows it)", ref, v.Name)
	}
	if with := v.BroughtIn(m.Fingerprint()); len(with) > 0 && confirm != nil {
		if err := confirm(with); err != nil {
			return nil, nil, err
		}
	}
	cut, err := e.departedWriters(ctx, v, m.Fingerprint())
	if err != nil {
		return nil, nil, err
	}
	e.keep(ctx, v, cut)
	b, ring, err := team.RotateCut(v.State, v.Me, s.Keys, m.Fingerprint(), cut, e.now())
	if err != nil {
		return nil, nil, err
	}
	if err := e.client(s.Hub).AppendTeamEntry(ctx, s.ID, v.Seq+1, b); err != nil {
		return nil, nil, err
	}
	s.Keys = ring
	v, err = e.Verify(ctx, s)
	return m, v, err
}

// rotate makes a new key after a member left (the admin's machine does
// it at its next sync).
func (e *Client) rotate(ctx context.Context, v *Verified) (*Verified, error) {
	cut, err := e.departedWriters(ctx, v, "")
	if err != nil {
		return nil, err
	}
	e.keep(ctx, v, cut)
	b, ring, err := team.RotateCut(v.State, v.Me, v.Local.Keys, "", cut, e.now())
	if err != nil {
		return nil, err
	}
	if err := e.client(v.Local.Hub).AppendTeamEntry(ctx, v.Team, v.Seq+1, b); err != nil {
		return nil, err
	}
	v.Local.Keys = ring
	return e.Verify(ctx, v.Local)
}

// departedWriters returns what a removal of target ("" for none) or a
// rotation names of the members and machines who left: the last index
// the hub holds of each of their writer ids the chain has not named yet
// (team.Entry.Writers). A writer id's author is the one its records were
// applied from, else the key a bound writer id names, else the one its
// first record's header names. What the hub withholds here is not named,
// and no client applies it after.
func (e *Client) departedWriters(ctx context.Context, v *Verified, target string) (map[string]int64, error) {
	// Those who left since the newest rotation: what those before wrote
	// before they left was named by it, and a writer id of theirs the
	// hub shows since is one they made after.
	gone := map[string]bool{}
	for fp, at := range v.Left {
		if at > v.EpochAt[v.Epoch] {
			gone[fp] = true
		}
	}
	if target != "" {
		for fp := range v.GoneWith(target) {
			gone[fp] = true
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	s := v.Local
	c := e.client(s.Hub)
	hosts, err := c.Team(s.ID).Hosts(ctx)
	if err != nil {
		return nil, err
	}
	if s.Writers == nil {
		s.Writers = map[string]string{}
	}
	out := map[string]int64{}
	for _, h := range hosts {
		if _, named := v.Cut[h.Host]; named || h.Last < 1 {
			continue
		}
		author, ok := s.Writers[h.Host]
		if !ok && team.Bound(h.Host) {
			// A writer id bound to a key names its author (every client
			// sets aside a record of another under it): no record of it
			// need be read from the hub.
			for fp := range gone {
				if team.OwnsWriter(fp, h.Host) {
					out[h.Host] = h.Last
				}
			}
			continue
		}
		if !ok {
			recs, _, err := c.Team(s.ID).Records(ctx, h.Host, 0, 1)
			if err != nil {
				return nil, err
			}
			var hd team.Header
			if len(recs) > 0 && json.Unmarshal(recs[0].Header, &hd) == nil {
				author = hd.Author
			}
			s.Writers[h.Host] = author
		}
		if gone[author] {
			out[h.Host] = h.Last
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, e.Local.Save(s)
}

// Leave signs this member's leaving. What this machine synced stays on
// it (the team's store and keys up to now).
// It returns the chain with the leave, whose last entry revoked the
// open invites this member (or machine) made or that were for them.
func (e *Client) Leave(ctx context.Context, s *State) (*Verified, error) {
	v, err := e.Verify(ctx, s)
	if err != nil {
		return nil, err
	}
	b, err := team.Leave(v.State, v.Me, e.now())
	if err != nil {
		return nil, err
	}
	if err := e.client(s.Hub).AppendTeamEntry(ctx, s.ID, v.Seq+1, b); err != nil {
		return nil, err
	}
	nv, err := e.Verify(ctx, s)
	if !errors.Is(err, ErrGone) {
		return nv, err
	}
	// The hub serves its chain to members only: a member who left (or
	// a machine whose member has no other in the team) reads it no more,
	// and takes its own entry in on the chain it verified.
	if err := v.State.Apply("", b); err != nil {
		return nil, err
	}
	s.Seq, s.Head, s.Gone = v.State.Seq, v.State.Head, true
	return v, e.Local.Save(s)
}

// Share names project p in the chain as shared by this member (mode
// "": no longer shared) and keeps the choice on this machine.
func (e *Client) Share(ctx context.Context, s *State, p team.Project) error {
	v, err := e.Verify(ctx, s)
	if err != nil {
		return err
	}
	b, err := team.Share(v.State, v.Me, s.Keys, p, e.now())
	if err != nil {
		return err
	}
	if err := e.client(s.Hub).AppendTeamEntry(ctx, s.ID, v.Seq+1, b); err != nil {
		return err
	}
	if p.Mode == "" {
		delete(s.Shares, p.ID)
	} else {
		s.Shares[p.ID] = p
	}
	_, err = e.Verify(ctx, s)
	return err
}

// Fork is what a machine whose verified chain the hub contradicts sees
// of both: the head this machine verified (Seq, Mine), the hub's entry
// at that number (Theirs, "" when the hub holds fewer entries), and the
// head of the hub's chain, which verifies from the genesis of the
// pinned admin (HubSeq, HubHead). Agrees is set when the hub's chain
// holds this machine's head: there is no fork.
type Fork struct {
	Team    string `json:"team"`
	Seq     int64  `json:"seq"`
	Mine    string `json:"mine"`
	Theirs  string `json:"theirs,omitempty"`
	HubSeq  int64  `json:"hub_seq"`
	HubHead string `json:"hub_head"`
	Agrees  bool   `json:"agrees"`
	// Entry says what the hub's entry at Seq is: its kind, signer and
	// time.
	Entry string `json:"entry,omitempty"`
}

// Fork reads the hub's chain, verifies it from its genesis against the
// pinned admin (a chain that does not verify is refused as always), and
// compares it with the head this machine verified before.
func (e *Client) Fork(ctx context.Context, s *State) (*Fork, error) {
	chain, err := e.client(s.Hub).TeamChain(ctx, s.ID, 0)
	if err != nil {
		return nil, err
	}
	st, err := team.Verify(s.ID, s.Admin, chain)
	if err != nil {
		return nil, fmt.Errorf("team %s: %w; nothing was read or sent", s.Name, err)
	}
	f := &Fork{Team: s.Name, Seq: s.Seq, Mine: s.Head, HubSeq: st.Seq, HubHead: st.Head}
	if s.Seq >= 1 && s.Seq <= st.Seq {
		f.Theirs = st.Hashes[s.Seq-1]
		x := st.Entries[s.Seq-1]
		f.Entry = fmt.Sprintf("%s by %s, %s", x.Kind, keyName(st, x.By), x.At.UTC().Format("2006-01-02 15:04 UTC"))
	}
	f.Agrees = s.Seq == 0 || f.Theirs == s.Head
	return f, nil
}

// Reanchor makes this machine verify the hub's chain from now on when
// choice (a prefix of 8 hex digits or more) names its head: this
// machine's own head of before is let go. Choosing this machine's own
// head keeps it, and every command goes on refusing the hub's chain
// until the hub shows one that holds it. It reports whether it
// re-anchored.
func (e *Client) Reanchor(ctx context.Context, s *State, choice string) (*Fork, bool, error) {
	f, err := e.Fork(ctx, s)
	if err != nil {
		return nil, false, err
	}
	choice = strings.ToLower(strings.TrimSpace(choice))
	switch {
	case len(choice) < 8:
		return f, false, loom.Errorf(loom.EINVALID, "name the head you choose by 8 hex digits or more of it, as loom team fork shows it")
	case strings.HasPrefix(s.Head, choice):
		return f, false, nil
	case !strings.HasPrefix(f.HubHead, choice):
		return f, false, loom.Errorf(loom.ENOTFOUND, "%s is neither this machine's head (%s) nor the hub's (%s)", choice, s.Head, f.HubHead)
	}
	if f.Agrees {
		return f, false, nil
	}
	// The head of a chain that verifies from the pinned admin's genesis:
	// Verify checks it again from there, and the records of the fork this
	// machine applied stay in its team's store.
	s.Seq, s.Head, s.Newer = f.HubSeq, f.HubHead, nil
	if err := e.Local.Save(s); err != nil {
		return f, false, err
	}
	_, err = e.Verify(ctx, s)
	return f, err == nil, err
}

// keyName names the key fp in st: a member, MEMBER/MACHINE, an invite's
// label.
func keyName(st *team.State, fp string) string {
	return (&Verified{State: st}).KeyName(fp)
}

// SetBudget signs the admin's entry setting the team's budget per member
// to b (a field 0: its default) and appends it on the hub.
func (e *Client) SetBudget(ctx context.Context, s *State, b team.Budget) (*Verified, error) {
	v, err := e.Verify(ctx, s)
	if err != nil {
		return nil, err
	}
	if v.Me.Fingerprint() != v.Admin {
		return nil, loom.Errorf(loom.EINVALID, "only the team's admin (%s) sets its budgets", v.Past[v.Admin].Name)
	}
	entry, err := team.SetBudget(v.State, v.Me, b, e.now())
	if err != nil {
		return nil, err
	}
	if err := e.client(s.Hub).AppendTeamEntry(ctx, s.ID, v.Seq+1, entry); err != nil {
		return nil, err
	}
	return e.Verify(ctx, s)
}

// verifyWhole reads the team's whole chain from the hub and verifies it
// from its genesis against the pinned admin and against the head this
// machine verified before.
func (e *Client) verifyWhole(ctx context.Context, s *State) (*team.State, error) {
	chain, err := e.chainAfter(ctx, s, 0)
	if err != nil {
		return nil, err
	}
	st, err := team.Verify(s.ID, s.Admin, chain)
	if err != nil {
		return nil, fmt.Errorf("team %s: %w; nothing was read or sent", s.Name, err)
	}
	if s.Seq > 0 {
		switch {
		case st.Seq < s.Seq:
			return nil, fmt.Errorf("team %s: %w: the hub holds %d entries, and this machine verified %d before (a hub rolled back or an entry dropped); nothing was read or sent: loom team fork shows both heads, to compare with a teammate's", s.Name, team.ErrForged, st.Seq, s.Seq)
		case team.Hash(chain[s.Seq-1]) != s.Head:
			return nil, fmt.Errorf("team %s: %w: entry %d is not the one this machine verified before (the chain was rewritten); nothing was read or sent: loom team fork shows both heads, to compare with a teammate's", s.Name, team.ErrForged, s.Seq)
		}
	}
	return st, nil
}

// checkpointed returns the team's chain as the hub holds it now,
// verified from this machine's checkpoint (the state of the chain it
// verified last, at s.Seq and s.Head): the hub is asked for the entries
// from entry s.Seq on, which must be the one verified, and each after it
// is checked against the state before it. It returns nil, and the seq
// of the checkpoint it read (0: none), when it holds no checkpoint of
// that head or the hub's chain does not go on from it: the caller reads
// and verifies the whole chain, and says what is wrong with it.
func (e *Client) checkpointed(ctx context.Context, s *State) (*team.State, int64, error) {
	if s.Seq == 0 {
		return nil, 0, nil
	}
	b, err := os.ReadFile(e.Local.checkpointFile(s.ID))
	if err != nil {
		return nil, 0, nil
	}
	st, err := team.UnmarshalCheckpoint(b)
	if err != nil || st.Team != s.ID || st.Admin != s.Admin || st.Seq != s.Seq || st.Head != s.Head {
		return nil, 0, nil
	}
	es, err := e.chainAfter(ctx, s, s.Seq-1)
	if err != nil {
		return nil, 0, err
	}
	if len(es) == 0 || team.Hash(es[0]) != s.Head {
		return nil, s.Seq, nil
	}
	for _, x := range es[1:] {
		if err := st.Apply(s.Admin, x); err != nil {
			return nil, s.Seq, nil
		}
	}
	return st, s.Seq, nil
}

// chainAfter reads the team's entries after seq after from the hub: a
// hub that serves them no more to a machine that verified the chain
// before has let it go (ErrGone).
func (e *Client) chainAfter(ctx context.Context, s *State, after int64) ([][]byte, error) {
	chain, err := e.client(s.Hub).TeamChain(ctx, s.ID, after)
	if loom.ErrorCode(err) == loom.ENOTFOUND && s.Seq > 0 {
		// The hub serves the chain to its members only.
		return nil, fmt.Errorf("team %s: %w", s.Name, ErrGone)
	}
	return chain, err
}
