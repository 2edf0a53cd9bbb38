package team

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/teamrun"
)

// The commands of a team's membership: create, invite (and revoke),
// invites, join, members, remove, leave and set-hub.

// CreateOptions are the options of `loom team create`.
type CreateOptions struct {
	*Options
	// Name is the team's; Me the creator's name in it (--name; default
	// the hub user).
	Name, Me string
}

func newCmdCreate(inv *command.Invocation, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{Options: newOptions(inv)}
	cmd := newCmd(inv, &cobra.Command{
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
	}, opts, func(args []string) error { opts.Name = args[0]; return nil }, runF, createRun)
	cmd.Flags().StringVarP(&opts.Me, "name", "n", "", "your `NAME` in the team (default your hub user)")
	hubFlags(cmd, opts.Options)
	return cmd
}

// createRun makes the team on the hub, with this member its admin.
func createRun(ctx context.Context, opts *CreateOptions) error {
	r, err := opts.client("")
	if err != nil {
		return err
	}
	h, err := opts.hubURL()
	if err != nil {
		return err
	}
	v, err := r.Create(ctx, h, opts.Name, opts.Me)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]any{"id": v.Team, "name": v.Name, "admin": v.Admin, "me": v.Local.Me, "hub": h})
	}
	fmt.Fprintf(opts.IO.Out, "team %s created on %s (id %s)\nyou are its admin, %s; your key's fingerprint: %s\ninvite members with loom team invite\n", v.Name, h, v.Team, v.Local.Me, v.Admin)
	return nil
}

// InviteOptions are the options of `loom team invite`.
type InviteOptions struct {
	*Options
	Label string
	// TTL is how long the invite joins (--expires); zero for ever.
	TTL time.Duration
	// Machine makes an invite for another machine of the member's own.
	Machine bool
	// Revoke names the open invite to revoke instead (its code,
	// fingerprint or label).
	Revoke string
}

func newCmdInvite(inv *command.Invocation, runF func(*InviteOptions) error) *cobra.Command {
	opts := &InviteOptions{Options: newOptions(inv)}
	var expires string
	args := func([]string) error {
		if expires != "never" && opts.Revoke == "" {
			ttl, err := human.ParseAge(expires)
			if err != nil || ttl <= 0 {
				return command.UsageErrorf("--expires %q: want a duration (7d, 12h, 2w) or never", expires)
			}
			opts.TTL = ttl
		}
		return nil
	}
	cmd := newCmd(inv, &cobra.Command{
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
	}, opts, args, runF, inviteRun)
	teamFlag(cmd, opts.Options)
	cmd.Flags().StringVar(&opts.Label, "label", "", "a `LABEL` for the invite, shown in the chain (a machine's: its name)")
	cmd.Flags().StringVar(&expires, "expires", "7d", "the invite stops joining after `DURATION` (12h, 7d, 2w; never)")
	cmd.Flags().BoolVar(&opts.Machine, "machine", false, "invite another machine of yours, not a new member")
	cmd.Flags().StringVar(&opts.Revoke, "revoke", "", "revoke the open `INVITE` (its code, fingerprint or label) instead")
	cmd.MarkFlagsMutuallyExclusive("revoke", "machine")
	cmd.MarkFlagsMutuallyExclusive("revoke", "label")
	cmd.MarkFlagsMutuallyExclusive("revoke", "expires")
	hubFlags(cmd, opts.Options)
	return cmd
}

// inviteRun makes a one-time invite code, or revokes one (--revoke).
func inviteRun(ctx context.Context, opts *InviteOptions) error {
	r, s, err := opts.find()
	if err != nil {
		return err
	}
	if opts.Revoke != "" {
		return revokeRun(ctx, opts, r, s)
	}
	c, err := r.Invite(ctx, s, opts.Label, opts.TTL, opts.Machine)
	if err != nil {
		return err
	}
	until := "usable once"
	var exp *time.Time
	if opts.TTL > 0 {
		t := opts.Now().Add(opts.TTL).UTC()
		exp = &t
		until += " until " + t.Format("2006-01-02 15:04 UTC")
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]any{"team": s.ID, "name": s.Name, "admin": c.Admin, "code": c.String(), "machine": opts.Machine, "expires": exp})
	}
	if opts.Machine {
		fmt.Fprintf(opts.IO.Out, "invite for another machine of yours (%s) in team %s, %s; on that machine:\n\n  loom team join %s\n\n", s.Me, s.Name, until, c.String())
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "invite to team %s (admin fingerprint %s), %s:\n\n  loom team join %s\n\n", s.Name, c.Admin, until, c.String())
	return nil
}

// revokeRun is invite --revoke: it revokes the open invite opts.Revoke
// names in team s.
func revokeRun(ctx context.Context, opts *InviteOptions, r *teamrun.Client, s *teamrun.State) error {
	m, v, err := r.Revoke(ctx, s, opts.Revoke)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]any{"revoked": m.Name, "fingerprint": m.Fingerprint(), "epoch": v.Epoch, "stale": v.Stale})
	}
	fmt.Fprintf(opts.IO.Out, "revoked invite %s (%s) of team %s", m.Name, m.Fingerprint(), v.Name)
	if v.Stale {
		fmt.Fprintln(opts.IO.Out, "; the admin's next loom team sync rotates the team's key")
	} else {
		fmt.Fprintf(opts.IO.Out, "; the team's key is now epoch %d, not wrapped for it\n", v.Epoch)
	}
	return nil
}

func newCmdInvites(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	return newTeamCmd(inv, &cobra.Command{
		Use:   "invites [--team NAME]",
		Short: "List the team's invites: open, used, revoked or expired",
		Long: `Invites verifies the team's chain and lists every invite made in it: its
label, fingerprint, who made it and when, when it expires, whether it is
for another machine of a member, and whether it is open, used, revoked
or expired. Revoke an open one with loom team invite --revoke.`,
		Example: `  loom team invites
  loom team invites --team core --json`,
		Args: command.ArgsBetween(0, 0),
	}, runF, invitesRun)
}

// invitesRun lists the invites of the team's verified chain.
func invitesRun(ctx context.Context, opts *Options) error {
	v, err := opts.verified(ctx)
	if err != nil {
		return err
	}
	list := v.Invites(opts.Now())
	if opts.JSON {
		if list == nil {
			list = []teamrun.InviteInfo{}
		}
		return command.WriteJSON(opts.IO.Out, list)
	}
	fmt.Fprintf(opts.IO.Out, "team %s: %s\n", v.Name, human.Plural(len(list), "invite"))
	for _, in := range list {
		what := "member"
		if in.MachineOf != "" {
			what = "machine of " + in.MachineOf
		}
		exp := "never expires"
		if in.Expires != nil {
			exp = "expires " + in.Expires.UTC().Format("2006-01-02 15:04 UTC")
		}
		fmt.Fprintf(opts.IO.Out, "  %-12s %-7s %s  %s, made by %s %s, %s\n", in.Label, in.State, in.Fingerprint, what, in.By, in.Made.UTC().Format("2006-01-02 15:04 UTC"), exp)
	}
	return nil
}

// JoinOptions are the options of `loom team join`.
type JoinOptions struct {
	*Options
	// Code is the invite's; Me the joiner's name in the team (--name;
	// default the hub user).
	Code, Me string
	// Yes joins without asking.
	Yes bool
}

func newCmdJoin(inv *command.Invocation, runF func(*JoinOptions) error) *cobra.Command {
	opts := &JoinOptions{Options: newOptions(inv)}
	cmd := newCmd(inv, &cobra.Command{
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
	}, opts, func(args []string) error { opts.Code = args[0]; return nil }, runF, joinRun)
	cmd.Flags().StringVarP(&opts.Me, "name", "n", "", "your `NAME` in the team (default your hub user)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "join without asking")
	hubFlags(cmd, opts.Options)
	cmd.Flags().Lookup("hub").Usage = "reach the team through `URL` (another process of the same hub) instead of the code's"
	return cmd
}

// joinRun joins the team an invite code names, once its admin's
// fingerprint is shown and, unless --yes, confirmed.
func joinRun(ctx context.Context, opts *JoinOptions) error {
	r, err := opts.client("")
	if err != nil {
		return err
	}
	ios := opts.IO
	confirm := func(teamName, admin, machineOf string) error {
		fmt.Fprintf(ios.ErrOut, "team %s; its admin's key fingerprint: %s\n", teamName, admin)
		if machineOf != "" {
			fmt.Fprintf(ios.ErrOut, "this machine joins as another machine of %s\n", machineOf)
		}
		return ask(ctx, ios, opts.Yes, "Join this team?", "Not joined.",
			"not on a terminal, so not asked: compare the fingerprint above with the admin's, then join with --yes (nothing was sent)")
	}
	v, err := r.Join(ctx, opts.Code, opts.Me, opts.Hub, confirm)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(ios.Out, map[string]any{"id": v.Team, "name": v.Name, "admin": v.Admin, "me": v.Local.Me, "machine": v.Local.Machine, "members": len(v.Members)})
	}
	if v.Local.Machine != "" {
		fmt.Fprintf(ios.Out, "joined team %s as %s's machine %s (%s); admin fingerprint %s\nloom team sync brings the team's sessions; loom team share shares this machine's projects\n", v.Name, v.Local.Me, v.Local.Machine, human.Plural(len(v.Members), "member"), v.Admin)
		return nil
	}
	fmt.Fprintf(ios.Out, "joined team %s as %s (%s); admin fingerprint %s\nshare a project with loom team share --content (or --aggregates); loom team sync brings the team's sessions\n", v.Name, v.Local.Me, human.Plural(len(v.Members), "member"), v.Admin)
	return nil
}

func newCmdMembers(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	return newTeamCmd(inv, &cobra.Command{
		Use:   "members [--team NAME]",
		Short: "List the team's members, as the verified chain says",
		Long: `Members verifies the team's whole chain and lists its members with their
keys' fingerprints, the projects each shares, and the key's epoch. The
hub's own list is never read: a member is who the signed chain names.`,
		Example: `  loom team members
  loom team members --team core --json`,
		Args: command.ArgsBetween(0, 0),
	}, runF, membersRun)
}

// memberMachine is another machine of a member, as loom team members
// --json lists it.
type memberMachine struct {
	Name        string `json:"name"`
	Fingerprint string `json:"fingerprint"`
	User        string `json:"user"`
	This        bool   `json:"this,omitempty"`
}

// memberRow is a member as loom team members --json lists it.
type memberRow struct {
	Name        string          `json:"name"`
	Fingerprint string          `json:"fingerprint"`
	Admin       bool            `json:"admin"`
	User        string          `json:"user"`
	This        bool            `json:"this,omitempty"`
	Shares      []string        `json:"shares"`
	Machines    []memberMachine `json:"machines"`
}

// memberRows are the members of v's chain, in order, each with its
// machines and the projects it shares.
func memberRows(v *teamrun.Verified) []memberRow {
	shares := v.Shares()
	var rows []memberRow
	me := v.Me.Fingerprint()
	for _, m := range v.SortedMembers() {
		rw := memberRow{Name: m.Name, Fingerprint: m.Fingerprint(), Admin: m.Fingerprint() == v.Admin, User: m.User, This: m.Fingerprint() == me, Shares: []string{}, Machines: []memberMachine{}}
		for fp, d := range v.MachinesOf(m.Fingerprint()) {
			rw.Machines = append(rw.Machines, memberMachine{Name: d.Name, Fingerprint: fp, User: d.User, This: fp == me})
		}
		slices.SortFunc(rw.Machines, func(a, b memberMachine) int { return strings.Compare(a.Name, b.Name) })
		for _, sh := range shares {
			if sh.Member == m.Name {
				rw.Shares = append(rw.Shares, sh.Project.Name+" ("+sh.Project.Mode+")")
			}
		}
		rows = append(rows, rw)
	}
	return rows
}

// membersRun lists the members of the team's verified chain.
func membersRun(ctx context.Context, opts *Options) error {
	v, err := opts.verified(ctx)
	if err != nil {
		return err
	}
	rows := memberRows(v)
	out := opts.IO.Out
	if opts.JSON {
		return command.WriteJSON(out, map[string]any{"team": v.Team, "name": v.Name, "epoch": v.Epoch, "entries": v.Seq, "members": rows})
	}
	entries := human.Count(v.Seq) + " chain entries"
	if v.Seq == 1 {
		entries = "1 chain entry"
	}
	fmt.Fprintf(out, "team %s (id %s): %s, key epoch %d, %s verified\n", v.Name, v.Team, human.Plural(len(rows), "member"), v.Epoch, entries)
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
		fmt.Fprintf(out, "  %-12s %-6s %s  %s%s\n", rw.Name, role, rw.Fingerprint, sh, this)
		for _, d := range rw.Machines {
			this = ""
			if d.This {
				this = "  (this machine)"
			}
			fmt.Fprintf(out, "    machine %-12s %s%s\n", d.Name, d.Fingerprint, this)
		}
	}
	if v.Stale {
		fmt.Fprintln(out, "a member or machine left, or an invite was revoked: the admin's next loom team sync rotates the team's key")
	}
	return nil
}

// RemoveOptions are the options of `loom team remove`.
type RemoveOptions struct {
	*Options
	// Member is the member, or MEMBER/MACHINE one machine of theirs.
	Member string
}

func newCmdRemove(inv *command.Invocation, runF func(*RemoveOptions) error) *cobra.Command {
	opts := &RemoveOptions{Options: newOptions(inv)}
	cmd := newCmd(inv, &cobra.Command{
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
	}, opts, func(args []string) error { opts.Member = args[0]; return nil }, runF, removeRun)
	teamFlag(cmd, opts.Options)
	return cmd
}

// removeRun takes a member, or one machine of theirs, out of the team
// and rotates its key.
func removeRun(ctx context.Context, opts *RemoveOptions) error {
	r, s, err := opts.find()
	if err != nil {
		return err
	}
	m, v, err := r.Remove(ctx, s, opts.Member)
	if err != nil {
		return err
	}
	h, revoked := v.KeyHolders(), v.RevokedBy(v.Seq)
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]any{"removed": m.Name, "fingerprint": m.Fingerprint(), "epoch": v.Epoch, "members": len(v.Members), "keys": h.Keys(), "holders": h, "revoked_invites": revoked})
	}
	fmt.Fprintf(opts.IO.Out, "removed %s (%s) from team %s", m.Name, m.Fingerprint(), v.Name)
	if len(revoked) > 0 {
		fmt.Fprintf(opts.IO.Out, ", revoking %d open invites made by or for them (%s)", len(revoked), strings.Join(revoked, ", "))
	}
	fmt.Fprintf(opts.IO.Out, "; the team's key is now epoch %d, wrapped for %s\n", v.Epoch, h)
	return nil
}

func newCmdLeave(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	return newTeamCmd(inv, &cobra.Command{
		Use:   "leave [--team NAME]",
		Short: "Leave a team",
		Long: `Leave signs your leaving into the team's chain. Nothing more is sent; the
admin's next loom team sync rotates the team's key, and until then no
member publishes. What this machine synced stays here. On a machine
that joined as another machine of yours, it takes that machine alone out
of the team.`,
		Example: `  loom team leave --team core`,
		Args:    command.ArgsBetween(0, 0),
	}, runF, leaveRun)
}

// leaveRun signs this member's (or this machine's) leaving into the chain.
func leaveRun(ctx context.Context, opts *Options) error {
	r, s, err := opts.find()
	if err != nil {
		return err
	}
	v, err := r.Leave(ctx, s)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "left team %s", s.Name)
	if revoked := v.RevokedBy(v.Seq); len(revoked) > 0 {
		fmt.Fprintf(opts.IO.Out, ", revoking %d open invites you made or that were for you (%s)", len(revoked), strings.Join(revoked, ", "))
	}
	fmt.Fprintln(opts.IO.Out, "; what this machine synced stays here")
	return nil
}

// newCmdSetHub builds loom team set-hub, whose options are the shared
// ones: the new address is Hub, the token to keep (--token) Token.
func newCmdSetHub(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := newOptions(inv)
	cmd := newCmd(inv, &cobra.Command{
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
	}, opts, func(args []string) error { opts.Hub = args[0]; return nil }, runF, setHubRun)
	teamFlag(cmd, opts)
	cmd.Flags().StringVar(&opts.Token, "token", "", "keep `TOKEN` as this machine's token on the team's hub")
	return cmd
}

// setHubRun points the team at another address of its hub, once the
// chain there verifies; the old address stays otherwise.
func setHubRun(ctx context.Context, opts *Options) error {
	h, err := opts.hubURL()
	if err != nil {
		return err
	}
	r, s, err := opts.find()
	if err != nil {
		return err
	}
	old := s.Hub
	s.Hub = h
	if opts.Token != "" {
		s.Token = opts.Token
	}
	v, err := r.Verify(ctx, s)
	if err != nil {
		return fmt.Errorf("%w; the team's hub stays %s", err, old)
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]any{"team": v.Name, "hub": h, "was": old, "seq": v.Seq})
	}
	fmt.Fprintf(opts.IO.Out, "team %s: hub %s (was %s); its chain of %d entries verified there\n", v.Name, h, old, v.Seq)
	if opts.Token != "" {
		fmt.Fprintf(opts.IO.Out, "the token given is kept for team %s on this machine\n", v.Name)
	}
	return nil
}
