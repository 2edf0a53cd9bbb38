package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/pricing"
)

// ReimportOptions are the options of `loom session reimport`.
type ReimportOptions struct {
	IO            *term.IOStreams
	Store         func(context.Context) (loom.Engine, error)
	Scope         func() command.Scope
	Formats       []importer.Format
	Now           func() time.Time
	ImportProject func(dir string) loom.Project
	User          string
	JSON          bool

	From string
	Refs []string
}

func newCmdSessionReimport(inv *command.Invocation, runF func(*ReimportOptions) error) *cobra.Command {
	opts := &ReimportOptions{IO: inv.IO, Store: inv.Store, Scope: inv.Scope, Formats: inv.Formats, Now: inv.TimeNow, ImportProject: inv.ImportProject}
	cmd := &cobra.Command{
		Use:   "reimport [--from AGENT] [ID...]",
		Short: "Read the kept originals of imported sessions again, with today's readers",
		Long: `Read again the bytes loom kept of the agents' files it imported (the
originals: docs/durability.md), with the readers of this loom, and bring
the sessions to what a fresh import of those files makes: what a reader
fixed since finds reaches them, also once the agent has deleted its
files. ID is a session (id, prefix, key or title); a sub-agent session
brings its whole file. Without ID, every session of --from AGENT is
read again; one of the two is needed.

What was done to a session in loom stays: its title, and its forks. A
session whose stored messages the new reading still holds in order gets
what changed in them and what the reading adds; one it no longer holds
so (a message a reader dropped and now reads) is made again under its
own id.`,
		Example: `  loom session reimport 0196a3b2
  loom session reimport --from claude-code
  loom session reimport --from codex --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs, opts.User, opts.JSON = args, inv.User(), inv.JSON()
			if len(args) == 0 && opts.From == "" {
				return command.UsageErrorf("name the sessions to read again, or --from AGENT")
			}
			if runF != nil {
				return runF(opts)
			}
			return reimportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "only the sessions of `AGENT` (all of them without ID)")
	return cmd
}

// ReimportReport is what `loom session reimport` did, per agent.
type ReimportReport struct {
	Tools []*importer.ToolReport `json:"tools"`
}

func reimportRun(ctx context.Context, opts *ReimportOptions) error {
	if opts.From != "" && formatNamed(opts.Formats, opts.From) == nil {
		return command.UsageErrorf("unknown agent %q: loom session import --from list names them", opts.From)
	}
	st, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	var ids []string
	for _, ref := range opts.Refs {
		s, err := opts.Scope().Resolve(ctx, st, ref)
		if err != nil {
			return err
		}
		// A sub-agent's or a branch's file is its main session's.
		for s.Kind != loom.KindMain && s.ParentID != "" && s.Source != nil {
			p, err := st.Session(ctx, s.ParentID)
			if err != nil || p.Source == nil {
				break
			}
			s = p
		}
		if s.Source == nil {
			return fmt.Errorf("session %s is loom's own, not imported: there is nothing to read again", command.SessionLabel(s))
		}
		if opts.From != "" && s.Source.Tool != opts.From {
			return fmt.Errorf("session %s is %s's, not %s's", command.SessionLabel(s), s.Source.Tool, opts.From)
		}
		ids = append(ids, s.ID)
	}
	// The originals of sessions purged since (here, from the trash, or on
	// another machine and synced) go first: they are nobody's to read
	// again.
	if _, err := st.DeleteOriginals(ctx, opts.User, nil); err != nil {
		return err
	}
	bundles, err := importer.KeptBundles(ctx, st, opts.User, opts.From, ids)
	if err != nil {
		return err
	}
	if len(ids) > 0 && len(bundles) == 0 {
		return fmt.Errorf("loom keeps no originals of %s: it was imported before loom kept them, or its originals were deleted", strings.Join(opts.Refs, ", "))
	}
	byTool := map[string][]importer.KeptBundle{}
	var tools []string
	for _, b := range bundles {
		if byTool[b.Tool] == nil {
			tools = append(tools, b.Tool)
		}
		byTool[b.Tool] = append(byTool[b.Tool], b)
	}
	slices.Sort(tools)
	rep := &ReimportReport{Tools: []*importer.ToolReport{}}
	im := &importer.Importer{Store: st, UserID: opts.User, Now: opts.Now, Price: pricing.Cost, Project: opts.ImportProject}
	for _, tool := range tools {
		f := formatNamed(opts.Formats, tool)
		if f == nil {
			return fmt.Errorf("loom keeps originals of %s, an agent this loom does not read", tool)
		}
		tr, err := im.Reimport(ctx, f, byTool[tool])
		if tr != nil {
			rep.Tools = append(rep.Tools, tr)
		}
		if err != nil {
			return err
		}
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, rep)
	}
	out := opts.IO.Out
	if len(rep.Tools) == 0 {
		fmt.Fprintln(out, "No kept originals to read again.")
		return nil
	}
	for _, t := range rep.Tools {
		fmt.Fprintf(out, "%s: read %s again: %s made again, %d grown, %d unchanged, %d new; %s added.\n",
			t.Tool, human.Plural(t.FilesRead, "kept file"), human.Plural(t.SessionsRepaired, "session"), t.SessionsGrown,
			t.SessionsUnchanged, t.SessionsNew, human.Plural(t.MessagesAdded, "message"))
		for _, p := range t.Problems {
			fmt.Fprintf(opts.IO.ErrOut, "  %s\n", term.SanitizeLine(p.String()))
		}
	}
	return nil
}

// formatNamed is the format of tool, nil when loom reads no such agent.
func formatNamed(formats []importer.Format, tool string) importer.Format {
	for _, f := range formats {
		if f.Tool() == tool {
			return f
		}
	}
	return nil
}
