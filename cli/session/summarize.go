package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/summarize"
)

// SummarizeOptions are the options of `loom session summarize`.
type SummarizeOptions struct {
	// StoredSessions' Store opens the store to write the summaries;
	// ReadStore for a dry run.
	StoredSessions
	ReadStore func(context.Context) (loom.Engine, error)
	// Summarizer writes the summaries of the user's sessions in st, as
	// config.toml's [summaries] sets it; without needProvider (a dry
	// run) it has no model.
	Summarizer func(ctx context.Context, st loom.Store, needProvider bool) (*summarize.Summarizer, error)

	Refs   []string
	All    bool
	DryRun bool
	Limit  int
}

func newCmdSessionSummarize(inv *command.Invocation, runF func(*SummarizeOptions) error) *cobra.Command {
	opts := &SummarizeOptions{
		StoredSessions: newStoredSessions(inv),
		ReadStore:      inv.ReadStore,
		Summarizer: func(ctx context.Context, st loom.Store, needProvider bool) (*summarize.Summarizer, error) {
			z, _, err := command.Summarizer(ctx, inv, st, needProvider)
			return z, err
		},
	}
	cmd := &cobra.Command{
		Use:   "summarize [SESSION…] [--all]",
		Short: "Write a three-line summary of sessions into their description",
		Long: `Ask the model of config.toml's [summaries] (else the chat's provider and
model) for a summary of each session named, or with --all of every quiet
session without a description (newest first, at most --limit): at most
three short lines saying what the session was about and what was decided
or done. The summary is kept as the session's description, which search,
the picker, loom session show, the dashboard and the MCP tools show, and
sync carries. It is written only where the description is empty: once,
and never over what someone wrote.

The model is given the title, the first prompt and the last messages'
text (at most 8 KB), with secrets replaced by markers. A session is
skipped, and never sent, when some of its text was redacted or holds a
secret, when it is a sub-agent session, when it has not been quiet for
[summaries] quiet (30m by default), or when [summaries] exclude names its
project or holds its directory.

With [summaries] enabled = true, loom serve and loom session import
--watch do the same in the background.`,
		Example: `  loom session summarize --all --dry-run
  loom session summarize 0196a3b2 "flaky test hunt"
  loom session summarize --all --limit 10 --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			switch {
			case opts.All && len(args) > 0:
				return command.UsageErrorf("name sessions or give --all, not both")
			case !opts.All && len(args) == 0:
				return command.UsageErrorf("name the sessions to summarise, or give --all")
			case opts.Limit < 0:
				return command.UsageErrorf("--limit must not be negative")
			}
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return summarizeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "every quiet session without a description")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be summarised or skipped, call no model")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "L", summarize.DefaultLimit, "with --all, summarise at most `N` sessions")
	return cmd
}

func summarizeRun(ctx context.Context, opts *SummarizeOptions) error {
	open := opts.Store
	if opts.DryRun {
		open = opts.ReadStore
	}
	st, err := open(ctx)
	if err != nil {
		return err
	}
	z, err := opts.Summarizer(ctx, st, !opts.DryRun)
	if err != nil {
		return err
	}
	var sessions []*loom.Session
	if opts.All {
		if sessions, err = z.Candidates(ctx, opts.Limit, nil); err != nil {
			return err
		}
	} else if sessions, err = opts.resolveAll(ctx, st, opts.Refs); err != nil {
		return err
	}
	var results []summarize.Result
	var runErr error
	for _, s := range sessions {
		r, err := z.Summarise(ctx, s, opts.DryRun)
		if err != nil {
			runErr = err
			break
		}
		results = append(results, r)
	}
	if opts.JSON {
		if results == nil {
			results = []summarize.Result{}
		}
		if err := command.WriteJSON(opts.IO.Out, results); err != nil {
			return err
		}
	} else {
		printSummaries(ctx, opts, st, results)
	}
	if runErr != nil {
		if done := summarised(results); done > 0 {
			return fmt.Errorf("summarised %d sessions, then: %w", done, runErr)
		}
		return runErr
	}
	return nil
}

func summarised(results []summarize.Result) int {
	n := 0
	for _, r := range results {
		if r.Summary != "" {
			n++
		}
	}
	return n
}

// printSummaries prints a line per session, its id and title, then its
// summary indented, or why it was skipped, and a count on stderr.
func printSummaries(ctx context.Context, opts *SummarizeOptions, st loom.Store, results []summarize.Result) {
	dryRun, out := opts.DryRun, opts.IO.Out
	done, skipped := 0, 0
	for _, r := range results {
		head := opts.DisplayID(ctx, st, r.SessionID)
		if r.Title != "" {
			head += "  " + term.SanitizeLine(r.Title)
		}
		switch {
		case r.Skipped != "":
			skipped++
			fmt.Fprintf(out, "%s\n    skipped: %s\n", head, r.Skipped)
		case dryRun:
			done++
			fmt.Fprintf(out, "%s\n    would be summarised\n", head)
		default:
			done++
			fmt.Fprintln(out, head)
			for _, line := range strings.Split(r.Summary, "\n") {
				fmt.Fprintf(out, "    %s\n", term.SanitizeLine(line))
			}
		}
	}
	verb := "summarised"
	if dryRun {
		verb = "would summarise"
	}
	fmt.Fprintf(opts.IO.ErrOut, "%s %s, skipped %d\n", verb, human.Plural(done, "session"), skipped)
}
