package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/secrets"
)

// HandoffOptions are the options of `loom session handoff`.
type HandoffOptions struct {
	IO *term.IOStreams
	// Formats are the other agents' session formats.
	Formats []importer.Format
	// ReadSession opens the store to read the session ref names, and
	// finds it.
	ReadSession func(ctx context.Context, ref string) (loom.Engine, *loom.Session, error)
	// ReadStore opens the store to read (restore-to: an agent's id by
	// its start), and User is whose sessions are read.
	ReadStore func(ctx context.Context) (loom.Engine, error)
	User      func() string
	// AbsPath makes a directory absolute against the working directory.
	AbsPath func(dir string) (string, error)
	Getenv  func(string) string
	Home    func() string
	Now     func() time.Time
	JSON    bool

	Ref string
	To  string
	Dir string
	// Last keeps only the last Last turns; 0 keeps them all.
	Last int
	// Secrets returns the secret detector; secrets are redacted unless
	// NoRedact.
	Secrets  func() (*secrets.Detector, error)
	NoRedact bool
}

func newCmdSessionHandoff(inv *command.Invocation, runF func(*HandoffOptions) error) *cobra.Command {
	opts := &HandoffOptions{
		IO:          inv.IO,
		Formats:     inv.Formats,
		ReadSession: inv.ReadSession,
		AbsPath:     inv.AbsPath,
		Getenv:      inv.Getenv,
		Home:        inv.Home,
		Now:         inv.TimeNow,
		Secrets:     command.ConfigLoader(inv.Config).Detector,
	}
	cmd := &cobra.Command{
		Use:   "handoff REF --to TOOL",
		Short: "Continue a session in another agent (Claude Code, Codex CLI, opencode, Cline …)",
		Long: `Write REF as a new session of another agent, in that agent's own format and
place, and print the command that resumes it there. TOOL is claude-code,
cline, codex, continue, copilot, droid, gemini, kilo, opencode, pi or
qwen. Any session works: loom's own, or one imported from any tool.

The agent gets every user prompt, every reply and every tool call with
its result: a shell command or a file read as the agent's own tool call,
any other tool as a text record of what ran and its output. System
messages (context another tool injected) are not carried, nor reasoning
the agent cannot take back unsigned; the output counts what was left out.

The session is written for the project directory DIR (default: the
session's project root), where the resume command runs. Once the agent
has continued it, loom session import --from TOOL brings it back as a
fork of REF. opencode and Kilo keep sessions in a database they make when
they first run: run them once before. Continue's cn (cn --fork ID) and
droid without a terminal (droid exec --fork ID PROMPT) go on with it as
a session of their own, which comes back as the fork.

Secrets (API keys, tokens, passwords, private keys) are replaced by
[REDACTED:rule] markers in what the agent gets, counted on standard
error; --no-redact hands them over as stored. See docs/security.md.`,
		Example: `  loom session handoff 0196a3b2 --to claude-code
  loom session handoff "flaky test" --to codex --last 5
  loom session handoff cli:api --to gemini --dir ~/src/api --json
  loom session handoff 0196a3b2 --to opencode  # then: opencode --session ses_…
  loom session handoff 0196a3b2 --to codex --no-redact`,
		Args: command.ArgsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if opts.To == "" {
				return command.UsageErrorf("--to is required: %s", strings.Join(handoffTools(inv.Formats), ", "))
			}
			if cmd.Flags().Changed("last") && opts.Last < 1 {
				return command.UsageErrorf("--last must be 1 or more")
			}
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return handoffRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "the agent to continue in: `TOOL` is claude-code, cline, codex, continue, copilot, droid, gemini, kilo, opencode, pi or qwen")
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "project `DIR` the agent continues in (default: the session's project root)")
	cmd.Flags().IntVar(&opts.Last, "last", 0, "carry only the last `N` turns")
	cmd.Flags().BoolVar(&opts.NoRedact, "no-redact", false, "hand secrets over as stored")
	return cmd
}

// handoffTools are the tools a session can be handed to.
func handoffTools(formats []importer.Format) []string {
	var names []string
	for _, fm := range formats {
		if _, ok := fm.(handoff.Writer); ok {
			names = append(names, fm.Tool())
		}
	}
	return names
}

// writerOf is the format of tool that is also its hand-off writer; nil
// when there is none.
func writerOf(formats []importer.Format, tool string) importer.Format {
	for _, fm := range formats {
		if _, ok := fm.(handoff.Writer); ok && fm.Tool() == tool {
			return fm
		}
	}
	return nil
}

func handoffRun(ctx context.Context, opts *HandoffOptions) error {
	fm := writerOf(opts.Formats, opts.To)
	if fm == nil {
		return command.UsageErrorf("--to %q: want %s", opts.To, strings.Join(handoffTools(opts.Formats), ", "))
	}
	w := fm.(handoff.Writer)
	st, s, err := opts.ReadSession(ctx, opts.Ref)
	if err != nil {
		return err
	}
	dir, err := dirFlag(opts.AbsPath, opts.Dir)
	if err != nil {
		return err
	}
	ho := handoff.Options{Dir: dir, Last: opts.Last, Env: opts.Getenv, Home: opts.Home(), Now: opts.Now()}
	if !opts.NoRedact && opts.Secrets != nil {
		if ho.Redact, err = opts.Secrets(); err != nil {
			return err
		}
	}
	rep, err := handoff.Run(ctx, st, s, w, ho)
	if loom.ErrorCode(err) == loom.EINVALID {
		// What cannot be handed off is the user's input to mend.
		return command.UsageErrorf("%s", strings.Replace(loom.ErrorMessage(err), "; name one", "; name one with --dir", 1))
	}
	if err != nil {
		return err
	}
	if rep.Redacted > 0 {
		if rep.Redacted, err = carriedRedactions(ctx, st, s, rep); err != nil {
			return err
		}
	}
	if rep.Redacted > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "loom: redacted %s (--no-redact keeps them)\n", human.Plural(rep.Redacted, "secret"))
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, rep)
	}
	if ho.Redact != nil {
		// The session is named as it was handed off: its title
		// redacted, as the files hold it.
		s, _ = ho.Redact.RedactSession(s)
	}
	return printHandoff(opts.IO, s, rep)
}

func printHandoff(ios *term.IOStreams, s *loom.Session, rep *handoff.Report) error {
	out := ios.Out
	cs := ios.ColorScheme()
	fmt.Fprintf(out, "Handed %s to %s: %s", command.SessionLabel(s), rep.Tool, human.Plural(rep.Messages, "message"))
	if n := rep.ToolCalls + rep.ToolRecords; n > 0 {
		fmt.Fprintf(out, ", %s", human.Plural(n, "tool call"))
		if rep.ToolRecords > 0 {
			fmt.Fprintf(out, " (%d as text records: tools %s does not have)", rep.ToolRecords, rep.Tool)
		}
	}
	fmt.Fprintln(out, ".")
	switch {
	case rep.FirstTurn > 1 && rep.FirstTurn == rep.LastTurn:
		fmt.Fprintf(out, "Only the last turn was carried (turn %d of %d).\n", rep.LastTurn, rep.Turns)
	case rep.FirstTurn > 1:
		fmt.Fprintf(out, "Only the last %d turns were carried (turns %d–%d of %d).\n", rep.LastTurn-rep.FirstTurn+1, rep.FirstTurn, rep.LastTurn, rep.Turns)
	}
	if len(rep.Dropped) > 0 {
		var kinds []string
		for k := range rep.Dropped {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		var parts []string
		for _, k := range kinds {
			parts = append(parts, droppedLabel(k, rep.Dropped[k]))
		}
		fmt.Fprintf(out, "Not carried: %s.\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(out, "Wrote %s\n", rep.Path)
	fmt.Fprintf(out, "Resume it with:\n  %s\n", cs.Bold(rep.Resume))
	return nil
}

// droppedLabel says how many of a kind of thing were not carried.
func droppedLabel(kind string, n int) string {
	switch kind {
	case "system":
		return human.Plural(n, "system message")
	case "reasoning":
		return human.Plural(n, "reasoning part")
	case "file":
		return human.Plural(n, "attached file")
	case "agent":
		return human.Plural(n, "sub-agent link")
	case "error":
		return human.Plural(n, "failed reply")
	}
	return fmt.Sprintf("%d %s", n, kind)
}

// carriedRedactions is how many of the secrets redacted for rep the
// handed-off file holds: the markers in it beyond those session s held
// as stored in st (a session redacted in place before). What the target
// does not take (reasoning it accepts only signed, system messages) was
// redacted too, but is in no file: not counted.
func carriedRedactions(ctx context.Context, st loom.Store, s *loom.Session, rep *handoff.Report) (int, error) {
	out, err := os.ReadFile(rep.Path)
	if err != nil {
		return 0, fmt.Errorf("reading the handed-off file: %w", err)
	}
	msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil {
		return 0, err
	}
	stored := strings.Count(s.Title, secrets.MarkerPrefix)
	for _, m := range msgs {
		b, _ := json.Marshal(m.Parts)
		stored += strings.Count(string(b), secrets.MarkerPrefix)
	}
	return min(rep.Redacted, max(0, strings.Count(string(out), secrets.MarkerPrefix)-stored)), nil
}

// dirFlag is the directory --dir names (given as dir), made absolute by
// abs; "" when --dir is not given. A --dir that is not a directory is the
// user's to mend.
func dirFlag(abs func(string) (string, error), dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	path, err := abs(dir)
	if err != nil {
		return "", err
	}
	switch fi, err := os.Stat(path); {
	case err != nil:
		return "", command.UsageErrorf("--dir %s: no such directory", dir)
	case !fi.IsDir():
		return "", command.UsageErrorf("--dir %s is a file, not a directory", dir)
	}
	return path, nil
}
