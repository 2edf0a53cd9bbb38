package team

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/teamrun"
)

// The commands of a team's membership: create, members, remove, leave
// and set-hub; invite (and revoke), invites and join are in invite.go.

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
	// InvitedBy is the machine (MEMBER or MEMBER/MACHINE) whose invite
	// it joined by: removing that machine removes this one too.
	InvitedBy string `json:"invited_by"`
	This      bool   `json:"this,omitempty"`
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
			rw.Machines = append(rw.Machines, memberMachine{Name: d.Name, Fingerprint: fp, User: d.User, InvitedBy: v.KeyName(v.JoinedVia[fp]), This: fp == me})
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
			fmt.Fprintf(out, "    machine %-12s %s  invited by %s%s\n", d.Name, d.Fingerprint, d.InvitedBy, this)
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
	// Yes removes, without asking, the machines that joined through the
	// invites of whoever is removed.
	Yes bool
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
removes that one machine, with the invites it made and every machine
that joined through one of them (and theirs in turn): it names them and
asks first (--yes does not ask). It says how many keys of whom the new
key is wrapped for. What they synced before stays on their machines.`,
		Example: `  loom team remove carol
  loom team remove bob/laptop`,
		Args: command.ArgsBetween(1, 1),
	}, opts, func(args []string) error { opts.Member = args[0]; return nil }, runF, removeRun)
	teamFlag(cmd, opts.Options)
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "remove the machines that joined through its invites without asking")
	return cmd
}

// removeRun takes a member, or one machine of theirs, out of the team
// and rotates its key.
func removeRun(ctx context.Context, opts *RemoveOptions) error {
	r, s, err := opts.find()
	if err != nil {
		return err
	}
	ios := opts.IO
	confirm := func(with []string) error {
		fmt.Fprintf(ios.ErrOut, "%s goes with every machine that joined through its invites: %s\n", opts.Member, strings.Join(with, ", "))
		return ask(ctx, ios, opts.Yes, "Remove them all?", "Nothing was removed.",
			"not on a terminal, so not asked: check the machines above, then remove with --yes (nothing was sent)")
	}
	m, v, err := r.Remove(ctx, s, opts.Member, confirm)
	if err != nil {
		return err
	}
	with := v.RemovedWith(v.Seq, m.Fingerprint())
	h, revoked := v.KeyHolders(), v.RevokedBy(v.Seq)
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]any{"removed": m.Name, "fingerprint": m.Fingerprint(), "removed_with": with, "epoch": v.Epoch, "members": len(v.Members), "keys": h.Keys(), "holders": h, "revoked_invites": revoked})
	}
	fmt.Fprintf(opts.IO.Out, "removed %s (%s) from team %s", m.Name, m.Fingerprint(), v.Name)
	if len(with) > 0 {
		fmt.Fprintf(opts.IO.Out, " with the machines that joined through its invites (%s)", strings.Join(with, ", "))
	}
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

// ForkOptions are the options of `loom team fork`.
type ForkOptions struct {
	*Options
	// Choose is the head chosen (8 hex digits or more of it): the hub's
	// re-anchors this machine on the hub's chain, this machine's keeps
	// it.
	Choose string
}

func newCmdFork(inv *command.Invocation, runF func(*ForkOptions) error) *cobra.Command {
	opts := &ForkOptions{Options: newOptions(inv)}
	cmd := newCmd(inv, &cobra.Command{
		Use:   "fork [--team NAME] [--choose HEAD]",
		Short: "Show the two heads of a chain the hub contradicts, and choose one",
		Long: `Fork is the way back for a machine whose every team command refuses the
hub's chain ("the chain was rewritten", "the hub holds N entries"): the
hub showed it one chain and now shows another, both signed as the
chain's rules require. It prints the head this machine verified before
and the hub's chain's head (verified from the genesis of the admin
pinned at join). Compare them with a teammate's loom team head over
another channel (a chat, a call): the head your teammates verify is
the team's. --choose HEAD (8 hex digits or more of it) then
re-anchors this machine on the hub's chain when HEAD is the hub's, or
keeps this machine's head (and every command refusing the hub's chain)
when it is this machine's own. What this machine applied before stays
in its team's store.`,
		Example: `  loom team fork
  loom team fork --choose 6a0b34e3`,
		Args: command.ArgsBetween(0, 0),
	}, opts, nil, runF, forkRun)
	teamFlag(cmd, opts.Options)
	cmd.Flags().StringVar(&opts.Choose, "choose", "", "choose the head `HEAD` (8 hex digits or more): the hub's re-anchors this machine, its own keeps it")
	return cmd
}

// forkRun shows the head this machine verified and the hub's, and
// re-anchors on the one chosen.
func forkRun(ctx context.Context, opts *ForkOptions) error {
	r, s, err := opts.find()
	if err != nil {
		return err
	}
	mine := s.Head
	if opts.Choose == "" {
		f, err := r.Fork(ctx, s)
		if err != nil {
			return err
		}
		if opts.JSON {
			return command.WriteJSON(opts.IO.Out, f)
		}
		out := opts.IO.Out
		if f.Agrees {
			fmt.Fprintf(out, "team %s: no fork: the hub's chain holds this machine's head (entry %d, %s) and goes on to entry %d, %s\n", f.Team, f.Seq, f.Mine, f.HubSeq, f.HubHead)
			return nil
		}
		fmt.Fprintf(out, "team %s: the hub's chain contradicts this machine's\n", f.Team)
		fmt.Fprintf(out, "  this machine verified entry %d: %s\n", f.Seq, f.Mine)
		if f.Theirs != "" {
			fmt.Fprintf(out, "  the hub's entry %d:            %s (%s)\n", f.Seq, f.Theirs, f.Entry)
		} else {
			fmt.Fprintf(out, "  the hub holds %d entries only\n", f.HubSeq)
		}
		fmt.Fprintf(out, "  the hub's head, entry %d:      %s\n", f.HubSeq, f.HubHead)
		fmt.Fprintf(out, "compare with a teammate's loom team head over another channel, then: loom team fork --choose %s (the hub's) or --choose %s (this machine's)\n", f.HubHead[:8], f.Mine[:8])
		return nil
	}
	f, moved, err := r.Reanchor(ctx, s, opts.Choose)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]any{"team": f.Team, "reanchored": moved, "seq": s.Seq, "head": s.Head, "was": mine})
	}
	switch {
	case moved:
		fmt.Fprintf(opts.IO.Out, "team %s: this machine now verifies the hub's chain, entry %d, head %s (it verified %s at entry %d before)\n", f.Team, s.Seq, s.Head, mine, f.Seq)
	case f.Agrees:
		fmt.Fprintf(opts.IO.Out, "team %s: no fork: nothing to choose\n", f.Team)
	default:
		fmt.Fprintf(opts.IO.Out, "team %s: this machine keeps entry %d, head %s: every command refuses the hub's chain until the hub shows one that holds it\n", f.Team, s.Seq, s.Head)
	}
	return nil
}
