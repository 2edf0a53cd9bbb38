package team

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/teamrun"
)

// The commands that bring a member in: invite (and revoke), invites
// and join.

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
		if in.Joined != "" {
			exp += ", joined by " + in.Joined
		}
		fmt.Fprintf(opts.IO.Out, "  %-12s %-7s %s  %s, made by %s %s, %s\n", in.Label, in.State, in.Fingerprint, what, in.MadeBy, in.Made.UTC().Format("2006-01-02 15:04 UTC"), exp)
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
