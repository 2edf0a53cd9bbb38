package team

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/team"
	"github.com/loomhq/loom/teamrun"
)

// ShareOptions are the options of `loom team share` and `unshare`.
type ShareOptions struct {
	*Options
	// Project returns the project a directory holds ("": the working
	// directory's).
	Project func(dir string) (loom.Project, error)
	// ReadStore opens this machine's store, whose sessions the preview
	// counts.
	ReadStore func(context.Context) (loom.Engine, error)
	User      func() string

	// Dir is the project's directory as given ("": the working
	// directory).
	Dir string
	// Mode is what is shared: team.ModeContent or team.ModeAggregates;
	// "" unshares.
	Mode string
	// Yes shares without asking.
	Yes bool
}

func newCmdShare(inv *command.Invocation, share bool, runF func(*ShareOptions) error) *cobra.Command {
	opts := &ShareOptions{Options: newOptions(inv), Project: projectOf(inv), ReadStore: inv.ReadStore, User: inv.User}
	var content, aggregates bool
	args := func(args []string) error {
		if share {
			switch {
			case content == aggregates:
				return command.UsageErrorf("say what to share: --content (the sessions) or --aggregates (numbers only)")
			case content:
				opts.Mode = team.ModeContent
			default:
				opts.Mode = team.ModeAggregates
			}
		}
		if len(args) > 0 {
			opts.Dir = args[0]
		}
		return nil
	}
	cmd := newCmd(inv, &cobra.Command{
		Use:   "share [PROJECT] --content | --aggregates [--team NAME] [--yes]",
		Short: "Share a project's sessions with the team",
		Long: `Share chooses to share one project's sessions with the team (PROJECT is a
directory, default the working directory's project, identified as sync
identifies it: by its git remote, else its path). Nothing is shared by
default, and nothing of another project is.

--content shares the sessions themselves; --aggregates only their usage,
cost, models, agents and tool counts, never any text. Either way every
record passes the secret gate before it is sealed, whatever this
store's own settings. The first share of a project shows what would be
sent (sessions, messages, secrets redacted) and asks; --yes for
scripts. loom team sync sends it.`,
		Example: `  loom team share --content
  loom team share ~/src/api --aggregates --team core --yes`,
		Args: command.ArgsBetween(0, 1),
	}, opts, args, runF, shareRun)
	if share {
		cmd.Flags().BoolVar(&content, "content", false, "share the sessions themselves")
		cmd.Flags().BoolVar(&aggregates, "aggregates", false, "share usage, cost, models, agents and tool counts only")
		cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "share without asking")
	} else {
		cmd.Use = "unshare [PROJECT] [--team NAME]"
		cmd.Short = "Stop sharing a project's sessions with the team"
		cmd.Long = `Unshare stops sending the project's sessions to the team. What teammates
received before stays on their machines.`
		cmd.Example = `  loom team unshare
  loom team unshare ~/src/api --team core`
	}
	teamFlag(cmd, opts.Options)
	return cmd
}

// projectOf returns the project a directory holds, on inv: the working
// directory's for "".
func projectOf(inv *command.Invocation) func(dir string) (loom.Project, error) {
	return func(dir string) (loom.Project, error) {
		if dir == "" {
			return inv.Project()
		}
		abs, err := inv.AbsPath(dir)
		if err != nil {
			return loom.Project{}, err
		}
		return paths.DetectProject(abs)
	}
}

// shareRun shares a project with the team in opts.Mode, or stops
// sharing it (mode "").
func shareRun(ctx context.Context, opts *ShareOptions) error {
	r, s, err := opts.find()
	if err != nil {
		return err
	}
	p, err := opts.Project(opts.Dir)
	if err != nil {
		return err
	}
	mode := opts.Mode
	proj := team.Project{ID: p.ID, Name: p.Name, Mode: mode}
	if mode == "" {
		if _, ok := s.Shares[p.ID]; !ok {
			return loom.Errorf(loom.ENOTFOUND, "you do not share project %s with team %s", p.Name, s.Name)
		}
	} else if _, ok := s.Shares[p.ID]; !ok {
		if err := confirmShare(ctx, opts, s, p); err != nil {
			return err
		}
	}
	if err := r.Share(ctx, s, proj); err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, map[string]any{"team": s.Name, "project": p.Name, "project_id": p.ID, "mode": mode})
	}
	if mode == "" {
		fmt.Fprintf(opts.IO.Out, "project %s is no longer shared with team %s; what teammates received stays with them\n", p.Name, s.Name)
	} else {
		fmt.Fprintf(opts.IO.Out, "project %s is shared with team %s (%s); loom team sync sends it\n", p.Name, s.Name, mode)
	}
	return nil
}

// confirmShare shows what the first share of p with team s would send
// and asks, unless --yes: nothing is shared unless it returns nil.
func confirmShare(ctx context.Context, opts *ShareOptions, s *teamrun.State, p loom.Project) error {
	ios, mode := opts.IO, opts.Mode
	pv, err := preview(ctx, opts, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(ios.ErrOut, "Sharing project %s (%s) with team %s, %s: %s, %s, %s redacted before sealing.\n", p.Name, p.Root, s.Name, mode, human.Plural(pv.sessions, "session"), human.Plural(pv.messages, "message"), human.Plural(pv.redacted, "secret"))
	if mode == team.ModeAggregates {
		fmt.Fprintln(ios.ErrOut, "Only usage, cost, models, agents and tool counts are sent; no text.")
	}
	return ask(ctx, ios, opts.Yes, "Share this project with the team?", "Nothing was shared.",
		"not on a terminal, so not asked: check the preview above, then run the same again with --yes (nothing was shared)")
}

type shared struct{ sessions, messages, redacted int }

// preview counts what sharing p would send: its sessions and messages,
// and the secrets the gate would redact.
func preview(ctx context.Context, opts *ShareOptions, p loom.Project) (shared, error) {
	var out shared
	c, _, err := opts.Config()
	if err != nil {
		return out, err
	}
	det, err := c.Secrets.Detector()
	if err != nil {
		return out, err
	}
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return out, err
	}
	gate := det.Gate(st)
	list, err := gate.Sessions(ctx, loom.SessionFilter{UserID: opts.User(), ProjectID: p.ID, Archived: loom.WithArchived})
	if err != nil {
		return out, err
	}
	for _, sess := range list {
		out.sessions++
		var after int64
		for {
			msgs, err := gate.Messages(ctx, sess.ID, loom.MessageQuery{After: after, Oldest: true, Limit: 500})
			if err != nil {
				return out, err
			}
			if len(msgs) == 0 {
				break
			}
			out.messages += len(msgs)
			teamrun.Outgoing(opts.Mode, sess, msgs)
			after = msgs[len(msgs)-1].Seq
		}
	}
	out.redacted = gate.Redacted()
	return out, nil
}
