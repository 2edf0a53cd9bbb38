// Package team is loom team: teams on a hub that cannot read them
// (create, invite, join, members, remove, leave), the projects each
// member shares with a team (share, unshare) and the sync of the team's
// records (sync). See docs/team.md.
package team

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/syncpath"
	"github.com/loomhq/loom/teamrun"
)

// NewCmdTeam builds loom team and its commands.
func NewCmdTeam(inv *command.Invocation) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "team",
		Short: "Share chosen projects' sessions with a team, end to end encrypted",
		Long: `A team lives on a hub (loom serve on PostgreSQL) that keeps only
ciphertext and wrapped keys. Each member has a key pair on their
machines; the team's key is wrapped for each member; every membership
change is signed and every client verifies the whole chain from the
admin's genesis, whose fingerprint it pinned when it joined.

Nothing is shared by default: each member chooses, per project, to
share its sessions' content or only their aggregates (usage, cost,
models, agents, tool counts), and every record passes the secret gate
before it is sealed. loom team sync sends what you share and brings the
team's shared sessions into a store of their own on this machine, which
--team NAME reads (loom session list, show, fork, loom search, recall,
usage, mcp). Invites expire (7 days by default) and can be revoked; a
member adds another machine of theirs with an invite of their own
(loom team invite --machine), and removing the member removes all of
them. What changes in a shared session after it was sent (an update, a
redaction, a rename, a deletion) is sent again at the next sync. See
docs/team.md.`,
		Example: `  loom team create core
  loom team invite --label bob --expires 2d
  loom team invites
  loom team invite --machine --label laptop
  loom team join loomteam1-eyJodWIiOi…
  loom team share --content
  loom team sync
  loom session list --team core`,
	}
	cmd.AddCommand(newCmdCreate(inv), newCmdInvite(inv), newCmdInvites(inv), newCmdJoin(inv), newCmdMembers(inv),
		newCmdRemove(inv), newCmdLeave(inv), newCmdShare(inv, true), newCmdShare(inv, false),
		newCmdSync(inv), newCmdList(inv), newCmdDoctor(inv), newCmdHead(inv), newCmdSetHub(inv))
	return cmd
}

// env is what every team command reaches.
type env struct {
	inv   *command.Invocation
	hub   string
	token string
}

func addHub(cmd *cobra.Command, e *env) {
	cmd.Flags().StringVar(&e.hub, "hub", "", "the hub's `URL` (default [sync] hub, LOOM_SYNC_HUB)")
	cmd.Flags().StringVar(&e.token, "token", "", "your `TOKEN` on the hub (default the team's, else [sync] token, LOOM_SYNC_TOKEN)")
}

// run returns the operations' environment, with the token of --token,
// else the one kept for the team (saved: create or join --token), else
// the configuration's. --token given to create or join is kept.
func (e *env) run(saved string) (*teamrun.Client, error) {
	l, err := e.inv.Teams()
	if err != nil {
		return nil, err
	}
	tok := e.token
	if tok == "" {
		tok = saved
	}
	if tok == "" {
		c, _, err := e.inv.Config()
		if err != nil {
			return nil, err
		}
		tok = c.Sync.Token
	}
	if tok == "" {
		return nil, loom.Errorf(loom.EINVALID, "no token for the hub: give --token, or set [sync] token in config.toml (LOOM_SYNC_TOKEN); make one on the hub with loom token create")
	}
	return &teamrun.Client{Local: l, Token: tok, KeepToken: e.token != "", Now: e.inv.TimeNow}, nil
}

// hubURL is --hub, else the configuration's.
func (e *env) hubURL() (string, error) {
	h := e.hub
	if h == "" {
		c, _, err := e.inv.Config()
		if err != nil {
			return "", err
		}
		h = c.Sync.Hub
	}
	if h == "" {
		return "", loom.Errorf(loom.EINVALID, "no hub: give --hub http://HOST:PORT, or set [sync] hub in config.toml (LOOM_SYNC_HUB)")
	}
	if u, err := url.Parse(h); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", loom.Errorf(loom.EINVALID, "hub %q is not an http:// or https:// URL: write it as http://HOST:PORT", h)
	}
	return h, nil
}

// find returns the team --team names ("" for the only one).
func (e *env) find(ref string) (*teamrun.Client, *teamrun.State, error) {
	// The team first: a machine in no team is told that, not that it
	// has no token for a hub.
	s, err := e.inv.FindTeam(ref)
	if err != nil {
		return nil, nil, err
	}
	r, err := e.run(s.Token)
	if err != nil {
		return nil, nil, err
	}
	return r, s, nil
}

// verified returns the team --team names, its chain verified now.
func (e *env) verified(ctx context.Context, ref string) (*teamrun.Verified, error) {
	r, s, err := e.find(ref)
	if err != nil {
		return nil, err
	}
	return r.Verify(ctx, s)
}

func newCmdCreate(inv *command.Invocation) *cobra.Command {
	e := &env{inv: inv}
	var me string
	cmd := &cobra.Command{
		Use:   "create NAME [--name ME] [--hub URL]",
		Short: "Create a team on the hub, with you as its admin",
		Long: `Create makes a team on the hub: this machine's key pair (made on first use,
kept in the data directory's teams/member.key, mode 0600) becomes the
admin's, and the team's first key is wrapped for it. It prints the
admin's fingerprint, which every member sees when they join.

The hub is --hub, else [sync] hub; the token --token, else [sync]
token. The team keeps its hub, and the token when --token gives it
(in teams/ID/team.json, mode 0600), so that the team's later commands
need neither flag nor configuration.`,
		Example: `  loom team create core
  loom team create core --hub http://hub.example:8080 --token loom_…
  loom team create core --name alice`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.run("")
			if err != nil {
				return err
			}
			h, err := e.hubURL()
			if err != nil {
				return err
			}
			v, err := r.Create(cmd.Context(), h, args[0], me)
			if err != nil {
				return err
			}
			if inv.JSON() {
				return command.WriteJSON(inv.IO.Out, map[string]any{"id": v.Team, "name": v.Name, "admin": v.Admin, "me": v.Local.Me, "hub": h})
			}
			fmt.Fprintf(inv.IO.Out, "team %s created on %s (id %s)\nyou are its admin, %s; your key's fingerprint: %s\ninvite members with loom team invite\n", v.Name, h, v.Team, v.Local.Me, v.Admin)
			return nil
		},
	}
	cmd.Flags().StringVarP(&me, "name", "n", "", "your `NAME` in the team (default your hub user)")
	addHub(cmd, e)
	return cmd
}

func newCmdInvite(inv *command.Invocation) *cobra.Command {
	e := &env{inv: inv}
	var ref, label, expires, revoke string
	var machine bool
	cmd := &cobra.Command{
		Use:   "invite [--team NAME] [--label LABEL] [--expires DURATION] [--machine] | --revoke INVITE",
		Short: "Make a one-time invite code (admin), or one for another machine of yours",
		Long: `Invite makes a one-time invite: a new key pair whose public half is signed
into the team's chain, with the team's keys wrapped to it. The code
printed carries the hub's URL, the team's id, the admin's fingerprint
and the invite's private key: give it to one person, over a channel you
trust. It joins one member once; the chain refuses a second join with
it. It expires after --expires (default 7d; "never" for none): a join
dated after it is refused by every client.

Only the admin invites members. --machine makes an invite for another
machine of your own (any member may): loom team join with it on that
machine adds its own key pair to the chain as yours, and both machines
read the team; removing you removes all of your machines.

--revoke INVITE (its code, fingerprint or label, as loom team invites
lists them) revokes an open invite: no client takes a join with it
after, and on the admin's machine the team's key is rotated at once, so
that the invite's key opens nothing written after.`,
		Example: `  loom team invite --label bob
  loom team invite --label bob --expires 2d
  loom team invite --machine --label laptop
  loom team invite --revoke bob`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ttl time.Duration
			if expires != "never" && revoke == "" {
				var err error
				if ttl, err = human.ParseAge(expires); err != nil || ttl <= 0 {
					return command.UsageErrorf("--expires %q: want a duration (7d, 12h, 2w) or never", expires)
				}
			}
			r, s, err := e.find(ref)
			if err != nil {
				return err
			}
			if revoke != "" {
				m, v, err := r.Revoke(cmd.Context(), s, revoke)
				if err != nil {
					return err
				}
				if inv.JSON() {
					return command.WriteJSON(inv.IO.Out, map[string]any{"revoked": m.Name, "fingerprint": m.Fingerprint(), "epoch": v.Epoch, "stale": v.Stale})
				}
				fmt.Fprintf(inv.IO.Out, "revoked invite %s (%s) of team %s", m.Name, m.Fingerprint(), v.Name)
				if v.Stale {
					fmt.Fprintln(inv.IO.Out, "; the admin's next loom team sync rotates the team's key")
				} else {
					fmt.Fprintf(inv.IO.Out, "; the team's key is now epoch %d, not wrapped for it\n", v.Epoch)
				}
				return nil
			}
			c, err := r.Invite(cmd.Context(), s, label, ttl, machine)
			if err != nil {
				return err
			}
			until := "usable once"
			var exp *time.Time
			if ttl > 0 {
				t := inv.TimeNow().Add(ttl).UTC()
				exp = &t
				until += " until " + t.Format("2006-01-02 15:04 UTC")
			}
			if inv.JSON() {
				return command.WriteJSON(inv.IO.Out, map[string]any{"team": s.ID, "name": s.Name, "admin": c.Admin, "code": c.String(), "machine": machine, "expires": exp})
			}
			if machine {
				fmt.Fprintf(inv.IO.Out, "invite for another machine of yours (%s) in team %s, %s; on that machine:\n\n  loom team join %s\n\n", s.Me, s.Name, until, c.String())
				return nil
			}
			fmt.Fprintf(inv.IO.Out, "invite to team %s (admin fingerprint %s), %s:\n\n  loom team join %s\n\n", s.Name, c.Admin, until, c.String())
			return nil
		},
	}
	command.TeamFlag(cmd, &ref, "the team `NAME` (default the only one)")
	cmd.Flags().StringVar(&label, "label", "", "a `LABEL` for the invite, shown in the chain (a machine's: its name)")
	cmd.Flags().StringVar(&expires, "expires", "7d", "the invite stops joining after `DURATION` (12h, 7d, 2w; never)")
	cmd.Flags().BoolVar(&machine, "machine", false, "invite another machine of yours, not a new member")
	cmd.Flags().StringVar(&revoke, "revoke", "", "revoke the open `INVITE` (its code, fingerprint or label) instead")
	cmd.MarkFlagsMutuallyExclusive("revoke", "machine")
	cmd.MarkFlagsMutuallyExclusive("revoke", "label")
	cmd.MarkFlagsMutuallyExclusive("revoke", "expires")
	addHub(cmd, e)
	return cmd
}

func newCmdInvites(inv *command.Invocation) *cobra.Command {
	e := &env{inv: inv}
	var ref string
	cmd := &cobra.Command{
		Use:   "invites [--team NAME]",
		Short: "List the team's invites: open, used, revoked or expired",
		Long: `Invites verifies the team's chain and lists every invite made in it: its
label, fingerprint, who made it and when, when it expires, whether it is
for another machine of a member, and whether it is open, used, revoked
or expired. Revoke an open one with loom team invite --revoke.`,
		Example: `  loom team invites
  loom team invites --team core --json`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := e.verified(cmd.Context(), ref)
			if err != nil {
				return err
			}
			list := v.Invites(inv.TimeNow())
			if inv.JSON() {
				if list == nil {
					list = []teamrun.InviteInfo{}
				}
				return command.WriteJSON(inv.IO.Out, list)
			}
			fmt.Fprintf(inv.IO.Out, "team %s: %s\n", v.Name, human.Plural(len(list), "invite"))
			for _, in := range list {
				what := "member"
				if in.MachineOf != "" {
					what = "machine of " + in.MachineOf
				}
				exp := "never expires"
				if in.Expires != nil {
					exp = "expires " + in.Expires.UTC().Format("2006-01-02 15:04 UTC")
				}
				fmt.Fprintf(inv.IO.Out, "  %-12s %-7s %s  %s, made by %s %s, %s\n", in.Label, in.State, in.Fingerprint, what, in.By, in.Made.UTC().Format("2006-01-02 15:04 UTC"), exp)
			}
			return nil
		},
	}
	command.TeamFlag(cmd, &ref, "the team `NAME` (default the only one)")
	return cmd
}

func newCmdJoin(inv *command.Invocation) *cobra.Command {
	e := &env{inv: inv}
	var name string
	var yes bool
	cmd := &cobra.Command{
		Use:   "join CODE [--name ME] [--yes]",
		Short: "Join a team with an invite code",
		Long: `Join reads the team's chain from the hub the code names, verifies it from
its genesis against the admin's fingerprint in the code, shows that
fingerprint and asks (compare it with the admin's, out of band; --yes
for scripts), then joins: the invite's key signs your public keys into
the chain, and the team's keys are wrapped again for you.

The code names the hub; your token on it is --token, else [sync] token.
The team keeps the token --token gives (in teams/ID/team.json, mode
0600), so that the team's later commands need no configuration.`,
		Example: `  loom team join loomteam1-eyJodWIiOi… --name bob
  loom team join loomteam1-eyJodWIiOi… --token loom_…`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.run("")
			if err != nil {
				return err
			}
			confirm := func(teamName, admin, machineOf string) error {
				fmt.Fprintf(inv.IO.ErrOut, "team %s; its admin's key fingerprint: %s\n", teamName, admin)
				if machineOf != "" {
					fmt.Fprintf(inv.IO.ErrOut, "this machine joins as another machine of %s\n", machineOf)
				}
				if yes {
					return nil
				}
				if !inv.IO.CanPrompt() {
					return command.UsageErrorf("not on a terminal, so not asked: compare the fingerprint above with the admin's, then join with --yes (nothing was sent)")
				}
				ok, err := term.Confirm(cmd.Context(), inv.IO, "Join this team?")
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintln(inv.IO.ErrOut, "Not joined.")
					return &command.SilentError{Code: command.ExitError}
				}
				return nil
			}
			v, err := r.Join(cmd.Context(), args[0], name, e.hub, confirm)
			if err != nil {
				return err
			}
			if inv.JSON() {
				return command.WriteJSON(inv.IO.Out, map[string]any{"id": v.Team, "name": v.Name, "admin": v.Admin, "me": v.Local.Me, "machine": v.Local.Machine, "members": len(v.Members)})
			}
			if v.Local.Machine != "" {
				fmt.Fprintf(inv.IO.Out, "joined team %s as %s's machine %s (%s); admin fingerprint %s\nloom team sync brings the team's sessions; loom team share shares this machine's projects\n", v.Name, v.Local.Me, v.Local.Machine, human.Plural(len(v.Members), "member"), v.Admin)
				return nil
			}
			fmt.Fprintf(inv.IO.Out, "joined team %s as %s (%s); admin fingerprint %s\nshare a project with loom team share --content (or --aggregates); loom team sync brings the team's sessions\n", v.Name, v.Local.Me, human.Plural(len(v.Members), "member"), v.Admin)
			return nil
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "your `NAME` in the team (default your hub user)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "join without asking")
	addHub(cmd, e)
	cmd.Flags().Lookup("hub").Usage = "reach the team through `URL` (another process of the same hub) instead of the code's"
	return cmd
}

func newCmdMembers(inv *command.Invocation) *cobra.Command {
	e := &env{inv: inv}
	var ref string
	cmd := &cobra.Command{
		Use:   "members [--team NAME]",
		Short: "List the team's members, as the verified chain says",
		Long: `Members verifies the team's whole chain and lists its members with their
keys' fingerprints, the projects each shares, and the key's epoch. The
hub's own list is never read: a member is who the signed chain names.`,
		Example: `  loom team members
  loom team members --team core --json`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := e.verified(cmd.Context(), ref)
			if err != nil {
				return err
			}
			shares := v.Shares()
			type machine struct {
				Name        string `json:"name"`
				Fingerprint string `json:"fingerprint"`
				User        string `json:"user"`
				This        bool   `json:"this,omitempty"`
			}
			type row struct {
				Name        string    `json:"name"`
				Fingerprint string    `json:"fingerprint"`
				Admin       bool      `json:"admin"`
				User        string    `json:"user"`
				This        bool      `json:"this,omitempty"`
				Shares      []string  `json:"shares"`
				Machines    []machine `json:"machines"`
			}
			var rows []row
			me := v.Me.Fingerprint()
			for _, m := range v.SortedMembers() {
				rw := row{Name: m.Name, Fingerprint: m.Fingerprint(), Admin: m.Fingerprint() == v.Admin, User: m.User, This: m.Fingerprint() == me, Shares: []string{}, Machines: []machine{}}
				for fp, d := range v.MachinesOf(m.Fingerprint()) {
					rw.Machines = append(rw.Machines, machine{Name: d.Name, Fingerprint: fp, User: d.User, This: fp == me})
				}
				slices.SortFunc(rw.Machines, func(a, b machine) int { return strings.Compare(a.Name, b.Name) })
				for _, sh := range shares {
					if sh.Member == m.Name {
						rw.Shares = append(rw.Shares, sh.Project.Name+" ("+sh.Project.Mode+")")
					}
				}
				rows = append(rows, rw)
			}
			if inv.JSON() {
				return command.WriteJSON(inv.IO.Out, map[string]any{"team": v.Team, "name": v.Name, "epoch": v.Epoch, "entries": v.Seq, "members": rows})
			}
			entries := human.Count(v.Seq) + " chain entries"
			if v.Seq == 1 {
				entries = "1 chain entry"
			}
			fmt.Fprintf(inv.IO.Out, "team %s (id %s): %s, key epoch %d, %s verified\n", v.Name, v.Team, human.Plural(len(rows), "member"), v.Epoch, entries)
			for _, rw := range rows {
				role := "member"
				if rw.Admin {
					role = "admin"
				}
				sh := "shares nothing"
				if len(rw.Shares) > 0 {
					sh = "shares " + strings.Join(rw.Shares, ", ")
				}
				this := ""
				if rw.This {
					this = "  (this machine)"
				}
				fmt.Fprintf(inv.IO.Out, "  %-12s %-6s %s  %s%s\n", rw.Name, role, rw.Fingerprint, sh, this)
				for _, d := range rw.Machines {
					this = ""
					if d.This {
						this = "  (this machine)"
					}
					fmt.Fprintf(inv.IO.Out, "    machine %-12s %s%s\n", d.Name, d.Fingerprint, this)
				}
			}
			if v.Stale {
				fmt.Fprintln(inv.IO.Out, "a member or machine left, or an invite was revoked: the admin's next loom team sync rotates the team's key")
			}
			return nil
		},
	}
	command.TeamFlag(cmd, &ref, "the team `NAME` (default the only one)")
	return cmd
}

func newCmdRemove(inv *command.Invocation) *cobra.Command {
	e := &env{inv: inv}
	var ref string
	cmd := &cobra.Command{
		Use:   "remove MEMBER|MEMBER/MACHINE [--team NAME]",
		Short: "Remove a member, or one machine of theirs, and rotate the team's key (admin)",
		Long: `Remove takes a member, with every machine of theirs, out of the team's
chain and, in the same signed entry, revokes every open invite made by
or for them and makes a new key for the team wrapped for the remaining
members, their machines and their open invites only: nothing written
after it opens with the removed member's keys or invite codes, on any
of their machines. MEMBER/MACHINE (as loom team members shows it)
removes that one machine alone, with the invites it made. It says how
many keys of whom the new key is wrapped for. What they synced before
stays on their machines.`,
		Example: `  loom team remove carol
  loom team remove bob/laptop`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, s, err := e.find(ref)
			if err != nil {
				return err
			}
			m, v, err := r.Remove(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			h, revoked := v.KeyHolders(), v.RevokedBy(v.Seq)
			if inv.JSON() {
				return command.WriteJSON(inv.IO.Out, map[string]any{"removed": m.Name, "fingerprint": m.Fingerprint(), "epoch": v.Epoch, "members": len(v.Members), "keys": h.Keys(), "holders": h, "revoked_invites": revoked})
			}
			fmt.Fprintf(inv.IO.Out, "removed %s (%s) from team %s", m.Name, m.Fingerprint(), v.Name)
			if len(revoked) > 0 {
				fmt.Fprintf(inv.IO.Out, ", revoking %d open invites made by or for them (%s)", len(revoked), strings.Join(revoked, ", "))
			}
			fmt.Fprintf(inv.IO.Out, "; the team's key is now epoch %d, wrapped for %s\n", v.Epoch, h)
			return nil
		},
	}
	command.TeamFlag(cmd, &ref, "the team `NAME` (default the only one)")
	return cmd
}

func newCmdLeave(inv *command.Invocation) *cobra.Command {
	e := &env{inv: inv}
	var ref string
	cmd := &cobra.Command{
		Use:   "leave [--team NAME]",
		Short: "Leave a team",
		Long: `Leave signs your leaving into the team's chain. Nothing more is sent; the
admin's next loom team sync rotates the team's key, and until then no
member publishes. What this machine synced stays here. On a machine
that joined as another machine of yours, it takes that machine alone out
of the team.`,
		Example: `  loom team leave --team core`,
		Args:    command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, s, err := e.find(ref)
			if err != nil {
				return err
			}
			v, err := r.Leave(cmd.Context(), s)
			if err != nil {
				return err
			}
			fmt.Fprintf(inv.IO.Out, "left team %s", s.Name)
			if revoked := v.RevokedBy(v.Seq); len(revoked) > 0 {
				fmt.Fprintf(inv.IO.Out, ", revoking %d open invites you made or that were for you (%s)", len(revoked), strings.Join(revoked, ", "))
			}
			fmt.Fprintln(inv.IO.Out, "; what this machine synced stays here")
			return nil
		},
	}
	command.TeamFlag(cmd, &ref, "the team `NAME` (default the only one)")
	return cmd
}

func newCmdSetHub(inv *command.Invocation) *cobra.Command {
	e := &env{inv: inv}
	var ref string
	cmd := &cobra.Command{
		Use:   "set-hub URL [--team NAME] [--token TOKEN]",
		Short: "Reach the team's hub at another address, on this machine",
		Long: `Set-hub changes the address this machine reaches the team's hub at (the
hub moved, or is reached through another name). The chain is read and
verified there first, against the admin pinned at join and the last
entry this machine verified: an address that serves another chain, or
an older one, is refused and the old address kept. Each machine of the
team sets it for itself. --token TOKEN keeps TOKEN as this machine's
token on the team's hub from then on (a token revoked or expired on
the hub), once the chain is read with it.`,
		Example: `  loom team set-hub https://hub.example.com --team core
  loom team set-hub https://hub.example.com --token loom_…`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e.hub = args[0]
			h, err := e.hubURL()
			if err != nil {
				return err
			}
			r, s, err := e.find(ref)
			if err != nil {
				return err
			}
			old := s.Hub
			s.Hub = h
			if e.token != "" {
				s.Token = e.token
			}
			v, err := r.Verify(cmd.Context(), s)
			if err != nil {
				return fmt.Errorf("%w; the team's hub stays %s", err, old)
			}
			if inv.JSON() {
				return command.WriteJSON(inv.IO.Out, map[string]any{"team": v.Name, "hub": h, "was": old, "seq": v.Seq})
			}
			fmt.Fprintf(inv.IO.Out, "team %s: hub %s (was %s); its chain of %d entries verified there\n", v.Name, h, old, v.Seq)
			if e.token != "" {
				fmt.Fprintf(inv.IO.Out, "the token given is kept for team %s on this machine\n", v.Name)
			}
			return nil
		},
	}
	command.TeamFlag(cmd, &ref, "the team `NAME` (default the only one)")
	cmd.Flags().StringVar(&e.token, "token", "", "keep `TOKEN` as this machine's token on the team's hub")
	return cmd
}

func newCmdList(inv *command.Invocation) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the teams this machine is in",
		Example: `  loom team list`,
		Args:    command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := inv.Teams()
			if err != nil {
				return err
			}
			all, err := l.Teams()
			if err != nil {
				return err
			}
			if inv.JSON() {
				type row struct {
					ID      string `json:"id"`
					Name    string `json:"name"`
					Hub     string `json:"hub"`
					Admin   string `json:"admin"`
					Me      string `json:"me"`
					Machine string `json:"machine,omitempty"`
					Gone    bool   `json:"gone"`
				}
				rows := []row{}
				for _, s := range all {
					rows = append(rows, row{s.ID, s.Name, s.Hub, s.Admin, s.Me, s.Machine, s.Gone})
				}
				return command.WriteJSON(inv.IO.Out, rows)
			}
			if len(all) == 0 {
				fmt.Fprintln(inv.IO.ErrOut, "This machine is in no team: loom team create NAME makes one, loom team join CODE joins one.")
				return nil
			}
			for _, s := range all {
				state := "member"
				if s.Gone {
					state = "left"
				}
				me := s.Me
				if s.Machine != "" {
					me += "'s machine " + s.Machine
				}
				fmt.Fprintf(inv.IO.Out, "%-12s %s  %s as %s (%s)\n", s.Name, s.ID, s.Hub, me, state)
			}
			return nil
		},
	}
}

// projectOf returns the project dir names (default the working
// directory's).
func projectOf(inv *command.Invocation, dir string) (loom.Project, error) {
	if dir == "" {
		return inv.Project()
	}
	abs, err := inv.AbsPath(dir)
	if err != nil {
		return loom.Project{}, err
	}
	return paths.DetectProject(abs)
}

func newCmdSync(inv *command.Invocation) *cobra.Command {
	e := &env{inv: inv}
	var ref string
	cmd := &cobra.Command{
		Use:   "sync [--team NAME]",
		Short: "Send what you share and bring the team's shared sessions",
		Long: `Sync verifies the team's chain, sends the new messages of the sessions of
the projects you share (through the secret gate, sealed under the
team's key and signed by you), and applies the teammates' records to
the team's store on this machine (data directory teams/ID/sessions.db),
which --team reads. A record that does not verify (a writer the
verified chain does not name, a record altered) or that the team's store
cannot take is set aside, said on stderr in one line (past 10, the rest
in one line more), and the writer's next records are applied: sync
still exits 0, and loom team doctor lists what was set aside. Sync exits
1 only when it could not do its work (the hub unreachable, the chain
not valid, the store unwritable).`,
		Example: `  loom team sync
  loom team sync --team core --json`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return syncRun(cmd.Context(), e, ref)
		},
	}
	command.TeamFlag(cmd, &ref, "the team `NAME` (default the only one)")
	return cmd
}

func syncRun(ctx context.Context, e *env, ref string) error {
	inv := e.inv
	r, s, err := e.find(ref)
	if err != nil {
		return err
	}
	c, _, err := inv.Config()
	if err != nil {
		return err
	}
	det, err := c.Secrets.Detector()
	if err != nil {
		return err
	}
	own, err := inv.ReadStore(ctx)
	if err != nil {
		return err
	}
	ts, err := inv.OpenStore(ctx, "sqlite:"+r.Local.StoreFile(s.ID), command.AccessCreate)
	if err != nil {
		return err
	}
	defer ts.Close()
	stores := teamrun.Stores{Own: own, Team: ts, User: inv.User(), Detector: det}
	if sc := ts.Services().Scrubber; sc != nil {
		stores.Scrub = sc.Scrub
	}
	out, err := r.SyncTeam(ctx, s, stores)
	if err != nil {
		return err
	}
	sayAside(inv, s.Name, out.SetAside)
	if inv.JSON() {
		if err := command.WriteJSON(inv.IO.Out, out); err != nil {
			return err
		}
	} else {
		if out.Rotated {
			fmt.Fprintln(inv.IO.Out, "rotated the team's key (a member or machine left, or an invite was revoked or expired)")
		}
		if out.Waiting != "" {
			fmt.Fprintln(inv.IO.Out, out.Waiting)
		}
		changed := ""
		if out.Updated > 0 {
			changed += fmt.Sprintf(", %d updated", out.Updated)
		}
		if out.Deleted > 0 {
			changed += fmt.Sprintf(", %d deleted", out.Deleted)
		}
		fmt.Fprintf(inv.IO.Out, "team %s: sent %s (%s%s, %s redacted), applied %d\n", out.Team, human.Plural(out.Published, "record"), human.Plural(out.Sessions, "session"), changed, human.Plural(out.Redacted, "secret"), out.Applied)
	}
	return nil
}

// sayAside says on stderr, one line each (the first syncpath.MaxLines,
// then one line for the rest), the records a sync set aside.
func sayAside(inv *command.Invocation, teamName string, aside []teamrun.SetAside) {
	lines := syncpath.Lines(aside, "no member")
	for i, l := range lines {
		if i == len(lines)-1 {
			l += "; loom team doctor lists them"
		}
		fmt.Fprintf(inv.IO.ErrOut, "loom: team %s: %s\n", teamName, l)
	}
}

// maxAsideShown bounds the records set aside loom team doctor prints
// (--json gives every one kept): a writer id bound to its key is 49
// characters and a line names it twice, so 30 lines keep the list
// within 8 KB.
const maxAsideShown = 30

func newCmdDoctor(inv *command.Invocation) *cobra.Command {
	var ref string
	cmd := &cobra.Command{
		Use:   "doctor [--team NAME]",
		Short: "Say what this machine's syncs of the team set aside, and why",
		Long: `Doctor reads this machine's state of the team (without the hub) and
lists the teammates' records its syncs set aside instead of applying:
the writer id and index of each, its author as the verified chain names
them, and why (a writer no member of the chain, a record altered or
written under a key its author no longer held, one the team's store
could not take). A record set aside stops nothing: the writer's next
records were applied. Records set aside are kept, the first 200 of
them; --json lists them with their total.`,
		Example: `  loom team doctor
  loom team doctor --team core --json`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := inv.FindTeam(ref)
			if err != nil {
				return err
			}
			if inv.JSON() {
				aside := s.SetAside
				if aside == nil {
					aside = []teamrun.SetAside{}
				}
				return command.WriteJSON(inv.IO.Out, map[string]any{"team": s.Name, "id": s.ID, "seq": s.Seq, "head": s.Head, "set_aside": aside, "set_aside_total": s.SetAsideTotal})
			}
			fmt.Fprintf(inv.IO.Out, "team %s: chain verified to entry %d (%s)\n", s.Name, s.Seq, s.Head)
			if s.SetAsideTotal == 0 {
				fmt.Fprintln(inv.IO.Out, "no record set aside: every record read was applied")
				return nil
			}
			fmt.Fprintf(inv.IO.Out, "%s set aside, not applied:\n", human.Plural(s.SetAsideTotal, "record"))
			for i, a := range syncpath.AuthorsFirst(s.SetAside) {
				if i == maxAsideShown {
					fmt.Fprintf(inv.IO.Out, "  … and %s more (--json lists the first %s)\n", human.Count(int64(s.SetAsideTotal-i)), human.Count(int64(len(s.SetAside))))
					break
				}
				fmt.Fprintf(inv.IO.Out, "  %s\n", command.Truncate(a.String(), 300))
			}
			return nil
		},
	}
	command.TeamFlag(cmd, &ref, "the team `NAME` (default the only one)")
	return cmd
}

func newCmdHead(inv *command.Invocation) *cobra.Command {
	e := &env{inv: inv}
	var ref string
	cmd := &cobra.Command{
		Use:   "head [--team NAME]",
		Short: "Print the team's chain head as this machine verifies it, to compare out of band",
		Long: `Head reads the team's chain from the hub, verifies it from its genesis,
and prints its head: the number and hash of the last entry, and the
key's epoch. Two members who read the same head see the same team. A
hub that shows one member an older chain, and nothing written under the
newer one, cannot be told from a quiet team by any client: compare the
heads over another channel (a chat, a call) now and then, and after a
removal. Each record names the head its writer verified; loom team sync
refuses to send while a teammate's record names a newer one.`,
		Example: `  loom team head
  loom team head --team core --json`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := e.verified(cmd.Context(), ref)
			if err != nil {
				return err
			}
			if inv.JSON() {
				return command.WriteJSON(inv.IO.Out, map[string]any{"team": v.Name, "id": v.Team, "seq": v.Seq, "head": v.Head, "epoch": v.Epoch})
			}
			fmt.Fprintf(inv.IO.Out, "team %s: entry %d, epoch %d, head %s\n", v.Name, v.Seq, v.Epoch, v.Head)
			return nil
		},
	}
	command.TeamFlag(cmd, &ref, "the team `NAME` (default the only one)")
	return cmd
}
