// Package team is loom team: teams on a hub that cannot read them
// (create, invite, join, members, remove, leave), the projects each
// member shares with a team (share, unshare) and the sync of the team's
// records (sync). See docs/team.md.
//
// Each command follows gh's pattern: options of its own around the
// shared Options, filled by its flags and arguments, and a runF that
// tests call instead of running it (newCmd builds that part of every
// command alike).
package team

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/human"
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
	cmd.AddCommand(newCmdCreate(inv, nil), newCmdInvite(inv, nil), newCmdInvites(inv, nil), newCmdJoin(inv, nil), newCmdMembers(inv, nil),
		newCmdRemove(inv, nil), newCmdLeave(inv, nil), newCmdShare(inv, true, nil), newCmdShare(inv, false, nil),
		newCmdSync(inv, nil), newCmdList(inv, nil), newCmdDoctor(inv, nil), newCmdHead(inv, nil), newCmdFork(inv, nil), newCmdSetHub(inv, nil), newCmdBudget(inv, nil))
	return cmd
}

// Options are what every loom team command works with: this machine's
// teams, the configuration, the clock, and the flags that name a team
// and reach its hub. Each command's options hold them.
type Options struct {
	IO *term.IOStreams
	// Teams is where this machine keeps its teams; FindTeam returns the
	// team a --team value names (command.Invocation.FindTeam).
	Teams    func() (teamrun.Local, error)
	FindTeam func(ref string) (*teamrun.State, error)
	Config   func() (*config.Config, string, error)
	Now      func() time.Time
	JSON     bool

	// Team is --team as given: a team's name or id, "" or
	// command.OnlyTeam for the only one.
	Team string
	// Hub and Token are --hub and --token as given, on the commands that
	// take them ("" when not given).
	Hub, Token string
}

// newOptions are the shared options of inv's run.
func newOptions(inv *command.Invocation) *Options {
	return &Options{IO: inv.IO, Teams: inv.Teams, FindTeam: inv.FindTeam, Config: inv.Config, Now: inv.TimeNow}
}

// shared returns the options every command shares, which each
// command's own options embed.
func (o *Options) shared() *Options { return o }

// newCmd finishes cmd, a team command with options opts, as every team
// command is finished (command.RunE): its RunE takes the global --json,
// lets args (when not nil) fill opts from the arguments or refuse them,
// then calls runF (a test's) when it is set, else run.
func newCmd[O interface{ shared() *Options }](inv *command.Invocation, cmd *cobra.Command, opts O, args func([]string) error, runF func(O) error, run func(context.Context, O) error) *cobra.Command {
	cmd.RunE = command.RunE(opts, func(a []string) error {
		opts.shared().JSON = inv.JSON()
		if args == nil {
			return nil
		}
		return args(a)
	}, runF, run)
	return cmd
}

// newTeamCmd finishes cmd, a command that works on one team and needs
// nothing but the shared options and --team, as newCmd does.
func newTeamCmd(inv *command.Invocation, cmd *cobra.Command, runF func(*Options) error, run func(context.Context, *Options) error) *cobra.Command {
	opts := newOptions(inv)
	cmd = newCmd(inv, cmd, opts, nil, runF, run)
	teamFlag(cmd, opts)
	return cmd
}

// ask asks question on ios's terminal, unless yes: off a terminal it
// refuses with notAsked (a usage error, nothing done), and an answer
// other than yes says no on stderr and exits 1.
func ask(ctx context.Context, ios *term.IOStreams, yes bool, question, no, notAsked string) error {
	if yes {
		return nil
	}
	if !ios.CanPrompt() {
		return command.UsageErrorf("%s", notAsked)
	}
	ok, err := term.Confirm(ctx, ios, question)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(ios.ErrOut, no)
		return &command.SilentError{Code: command.ExitError}
	}
	return nil
}

// teamFlag gives cmd --team [NAME] into o.Team.
func teamFlag(cmd *cobra.Command, o *Options) {
	command.TeamFlag(cmd, &o.Team, "the team `NAME` (default the only one)")
}

// hubFlags gives cmd --hub and --token into o.Hub and o.Token.
func hubFlags(cmd *cobra.Command, o *Options) {
	cmd.Flags().StringVar(&o.Hub, "hub", "", "the hub's `URL` (default [sync] hub, LOOM_SYNC_HUB)")
	cmd.Flags().StringVar(&o.Token, "token", "", "your `TOKEN` on the hub (default the team's, else [sync] token, LOOM_SYNC_TOKEN)")
}

// client returns the member's client of the hub, with the token of
// --token, else the one kept for the team (saved: create or join
// --token), else the configuration's. --token given to create or join
// is kept.
func (o *Options) client(saved string) (*teamrun.Client, error) {
	l, err := o.Teams()
	if err != nil {
		return nil, err
	}
	tok := o.Token
	if tok == "" {
		tok = saved
	}
	if tok == "" {
		c, _, err := o.Config()
		if err != nil {
			return nil, err
		}
		tok = c.Sync.Token
	}
	if tok == "" {
		return nil, loom.Errorf(loom.EINVALID, "no token for the hub: give --token, or set [sync] token in config.toml (LOOM_SYNC_TOKEN); make one on the hub with loom token create")
	}
	return &teamrun.Client{Local: l, Token: tok, KeepToken: o.Token != "", Now: o.Now}, nil
}

// hubURL is --hub, else the configuration's.
func (o *Options) hubURL() (string, error) {
	h := o.Hub
	if h == "" {
		c, _, err := o.Config()
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

// find returns the team --team names ("" for the only one), and the
// member's client of it.
func (o *Options) find() (*teamrun.Client, *teamrun.State, error) {
	// The team first: a machine in no team is told that, not that it
	// has no token for a hub.
	s, err := o.FindTeam(o.Team)
	if err != nil {
		return nil, nil, err
	}
	r, err := o.client(s.Token)
	if err != nil {
		return nil, nil, err
	}
	return r, s, nil
}

// verified returns the team --team names, its chain verified now.
func (o *Options) verified(ctx context.Context) (*teamrun.Verified, error) {
	r, s, err := o.find()
	if err != nil {
		return nil, err
	}
	return r.Verify(ctx, s)
}

func newCmdList(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	return newCmd(inv, &cobra.Command{
		Use:     "list",
		Short:   "List the teams this machine is in",
		Example: `  loom team list`,
		Args:    command.ArgsBetween(0, 0),
	}, newOptions(inv), nil, runF, listRun)
}

// listRun lists the teams this machine is in or was.
func listRun(_ context.Context, opts *Options) error {
	l, err := opts.Teams()
	if err != nil {
		return err
	}
	all, err := l.Teams()
	if err != nil {
		return err
	}
	if opts.JSON {
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
		return command.WriteJSON(opts.IO.Out, rows)
	}
	if len(all) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "This machine is in no team: loom team create NAME makes one, loom team join CODE joins one.")
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
		fmt.Fprintf(opts.IO.Out, "%-12s %s  %s as %s (%s)\n", s.Name, s.ID, s.Hub, me, state)
	}
	return nil
}

// SyncOptions are the options of `loom team sync`.
type SyncOptions struct {
	*Options
	// ReadStore opens this machine's own store, whose shared projects
	// are sent; OpenTeamStore opens the team's store on this machine
	// (file, created when missing), where the teammates' records go.
	ReadStore     func(context.Context) (loom.Engine, error)
	OpenTeamStore func(ctx context.Context, file string) (loom.Engine, error)
	User          func() string
}

func newCmdSync(inv *command.Invocation, runF func(*SyncOptions) error) *cobra.Command {
	opts := &SyncOptions{Options: newOptions(inv), ReadStore: inv.ReadStore, User: inv.User,
		OpenTeamStore: func(ctx context.Context, file string) (loom.Engine, error) {
			return inv.OpenStore(ctx, "sqlite:"+file, command.AccessCreate)
		}}
	cmd := newCmd(inv, &cobra.Command{
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
	}, opts, nil, runF, syncRun)
	teamFlag(cmd, opts.Options)
	return cmd
}

// syncRun sends what this member shares and applies the teammates'
// records to the team's store on this machine.
func syncRun(ctx context.Context, opts *SyncOptions) error {
	r, s, err := opts.find()
	if err != nil {
		return err
	}
	c, _, err := opts.Config()
	if err != nil {
		return err
	}
	det, err := c.Secrets.Detector()
	if err != nil {
		return err
	}
	own, err := opts.ReadStore(ctx)
	if err != nil {
		return err
	}
	ts, err := opts.OpenTeamStore(ctx, r.Local.StoreFile(s.ID))
	if err != nil {
		return err
	}
	defer ts.Close()
	stores := teamrun.Stores{Own: own, Team: ts, User: opts.User(), Detector: det}
	if sc := ts.Optional().Scrubber; sc != nil {
		stores.Scrub = sc.Scrub
	}
	out, err := r.SyncTeam(ctx, s, stores)
	if err != nil {
		return err
	}
	sayAside(opts.IO, s.Name, out.SetAside)
	for _, l := range out.Foreign {
		fmt.Fprintf(opts.IO.ErrOut, "loom: team %s: %s\n", s.Name, l)
	}
	if l := out.RestoredLine(); l != "" {
		fmt.Fprintf(opts.IO.ErrOut, "loom: team %s: %s\n", s.Name, l)
	}
	for _, l := range teamrun.GapLines(out.Missing) {
		fmt.Fprintf(opts.IO.ErrOut, "loom: team %s: %s\n", s.Name, l)
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, out)
	}
	if out.Rotated {
		fmt.Fprintln(opts.IO.Out, "rotated the team's key (a member or machine left, or an invite was revoked or expired)")
	}
	if out.Waiting != "" {
		fmt.Fprintln(opts.IO.Out, out.Waiting)
	}
	changed := ""
	if out.Updated > 0 {
		changed += fmt.Sprintf(", %d updated", out.Updated)
	}
	if out.Deleted > 0 {
		changed += fmt.Sprintf(", %d deleted", out.Deleted)
	}
	fmt.Fprintf(opts.IO.Out, "team %s: sent %s (%s%s, %s redacted), applied %d\n", out.Team, human.Plural(out.Published, "record"), human.Plural(out.Sessions, "session"), changed, human.Plural(out.Redacted, "secret"), out.Applied)
	return nil
}

// sayAside says on stderr, one line each (the first syncpath.MaxLines,
// then one line for the rest), the records a sync set aside.
func sayAside(ios *term.IOStreams, teamName string, aside []teamrun.SetAside) {
	lines := syncpath.Lines(aside, "no member")
	for i, l := range lines {
		if i == len(lines)-1 {
			l += "; loom team doctor lists them"
		}
		fmt.Fprintf(ios.ErrOut, "loom: team %s: %s\n", teamName, l)
	}
}

// maxAsideShown bounds the records set aside loom team doctor prints
// (--json gives every one kept): a writer id bound to its key is 49
// characters and a line names it twice, so 30 lines keep the list
// within 8 KB.
const maxAsideShown = 30

func newCmdDoctor(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	return newTeamCmd(inv, &cobra.Command{
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
	}, runF, doctorRun)
}

// doctorRun says what this machine's syncs of the team set aside,
// from its state alone.
func doctorRun(_ context.Context, opts *Options) error {
	s, err := opts.FindTeam(opts.Team)
	if err != nil {
		return err
	}
	out := opts.IO.Out
	if opts.JSON {
		aside := s.SetAside
		if aside == nil {
			aside = []teamrun.SetAside{}
		}
		return command.WriteJSON(out, map[string]any{"team": s.Name, "id": s.ID, "seq": s.Seq, "head": s.Head, "set_aside": aside, "set_aside_total": s.SetAsideTotal})
	}
	fmt.Fprintf(out, "team %s: chain verified to entry %d (%s)\n", s.Name, s.Seq, s.Head)
	if s.SetAsideTotal == 0 {
		fmt.Fprintln(out, "no record set aside: every record read was applied")
		return nil
	}
	fmt.Fprintf(out, "%s set aside, not applied:\n", human.Plural(s.SetAsideTotal, "record"))
	for i, a := range syncpath.AuthorsFirst(s.SetAside) {
		if i == maxAsideShown {
			fmt.Fprintf(out, "  … and %s more (--json lists the first %s)\n", human.Count(int64(s.SetAsideTotal-i)), human.Count(int64(len(s.SetAside))))
			break
		}
		fmt.Fprintf(out, "  %s\n", command.Truncate(a.String(), 300))
	}
	return nil
}

func newCmdHead(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	return newTeamCmd(inv, &cobra.Command{
		Use:   "head [--team NAME]",
		Short: "Print the team's chain head as this machine verifies it, to compare out of band",
		Long: `Head reads the team's chain from the hub, verifies what it has not
verified yet (from the machine's checkpoint, or from the genesis), and
prints its head: the number and hash of the last entry, and the key's
epoch; when the hub's chain still ends at the head this machine
verified, it prints the head it kept without reading the checkpoint. Two members who read the same head see the same team. A
hub that shows one member an older chain, and nothing written under the
newer one, cannot be told from a quiet team by any client: compare the
heads over another channel (a chat, a call) now and then, and after a
removal. Each record names the head its writer verified; loom team sync
refuses to send while a teammate's record names a newer one.`,
		Example: `  loom team head
  loom team head --team core --json`,
		Args: command.ArgsBetween(0, 0),
	}, runF, headRun)
}

// headRun prints the team's chain head, verified now: the head kept
// beside the checkpoint while the hub's chain still ends there.
func headRun(ctx context.Context, opts *Options) error {
	r, s, err := opts.find()
	if err != nil {
		return err
	}
	h, err := r.Head(ctx, s)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]any{"team": h.Name, "id": h.Team, "seq": h.Seq, "head": h.Head, "epoch": h.Epoch})
	}
	fmt.Fprintf(opts.IO.Out, "team %s: entry %d, epoch %d, head %s\n", h.Name, h.Seq, h.Epoch, h.Head)
	return nil
}
