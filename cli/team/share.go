package team

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/team"
	"github.com/loomhq/loom/teamrun"
)

func newCmdShare(inv *command.Invocation, share bool) *cobra.Command {
	e := &env{inv: inv}
	var ref string
	var content, aggregates, yes bool
	cmd := &cobra.Command{
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
		RunE: func(cmd *cobra.Command, args []string) error {
			mode := ""
			if share {
				switch {
				case content == aggregates:
					return command.UsageErrorf("say what to share: --content (the sessions) or --aggregates (numbers only)")
				case content:
					mode = team.ModeContent
				default:
					mode = team.ModeAggregates
				}
			}
			dir := ""
			if len(args) > 0 {
				dir = args[0]
			}
			return shareRun(cmd.Context(), e, ref, dir, mode, yes)
		},
	}
	if share {
		cmd.Flags().BoolVar(&content, "content", false, "share the sessions themselves")
		cmd.Flags().BoolVar(&aggregates, "aggregates", false, "share usage, cost, models, agents and tool counts only")
		cmd.Flags().BoolVarP(&yes, "yes", "y", false, "share without asking")
	} else {
		cmd.Use = "unshare [PROJECT] [--team NAME]"
		cmd.Short = "Stop sharing a project's sessions with the team"
		cmd.Long = `Unshare stops sending the project's sessions to the team. What teammates
received before stays on their machines.`
		cmd.Example = `  loom team unshare
  loom team unshare ~/src/api --team core`
	}
	command.TeamFlag(cmd, &ref, "the team `NAME` (default the only one)")
	return cmd
}

func shareRun(ctx context.Context, e *env, ref, dir, mode string, yes bool) error {
	inv := e.inv
	r, s, err := e.find(ref)
	if err != nil {
		return err
	}
	p, err := projectOf(inv, dir)
	if err != nil {
		return err
	}
	proj := team.Project{ID: p.ID, Name: p.Name, Mode: mode}
	if mode == "" {
		if _, ok := s.Shares[p.ID]; !ok {
			return loom.Errorf(loom.ENOTFOUND, "you do not share project %s with team %s", p.Name, s.Name)
		}
	} else if _, ok := s.Shares[p.ID]; !ok {
		pv, err := preview(ctx, inv, p, mode)
		if err != nil {
			return err
		}
		fmt.Fprintf(inv.IO.ErrOut, "Sharing project %s (%s) with team %s, %s: %s, %s, %s redacted before sealing.\n", p.Name, p.Root, s.Name, mode, human.Plural(pv.sessions, "session"), human.Plural(pv.messages, "message"), human.Plural(pv.redacted, "secret"))
		if mode == team.ModeAggregates {
			fmt.Fprintln(inv.IO.ErrOut, "Only usage, cost, models, agents and tool counts are sent; no text.")
		}
		if !yes {
			if !inv.IO.CanPrompt() {
				return command.UsageErrorf("not on a terminal, so not asked: check the preview above, then run the same again with --yes (nothing was shared)")
			}
			ok, err := term.Confirm(ctx, inv.IO, "Share this project with the team?")
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintln(inv.IO.ErrOut, "Nothing was shared.")
				return &command.SilentError{Code: command.ExitError}
			}
		}
	}
	if err := r.Share(ctx, s, proj); err != nil {
		return err
	}
	if inv.JSON() {
		return command.WriteJSON(inv.IO.Out, map[string]any{"team": s.Name, "project": p.Name, "project_id": p.ID, "mode": mode})
	}
	if mode == "" {
		fmt.Fprintf(inv.IO.Out, "project %s is no longer shared with team %s; what teammates received stays with them\n", p.Name, s.Name)
	} else {
		fmt.Fprintf(inv.IO.Out, "project %s is shared with team %s (%s); loom team sync sends it\n", p.Name, s.Name, mode)
	}
	return nil
}

type shared struct{ sessions, messages, redacted int }

// preview counts what sharing p would send: its sessions and messages,
// and the secrets the gate would redact.
func preview(ctx context.Context, inv *command.Invocation, p loom.Project, mode string) (shared, error) {
	var out shared
	c, _, err := inv.Config()
	if err != nil {
		return out, err
	}
	det, err := c.Secrets.Detector()
	if err != nil {
		return out, err
	}
	st, err := inv.ReadStore(ctx)
	if err != nil {
		return out, err
	}
	gate := det.Gate(st)
	list, err := gate.Sessions(ctx, loom.SessionFilter{UserID: inv.User(), ProjectID: p.ID, Archived: loom.WithArchived})
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
			teamrun.Outgoing(mode, sess, msgs)
			after = msgs[len(msgs)-1].Seq
		}
	}
	out.redacted = gate.Redacted()
	return out, nil
}
