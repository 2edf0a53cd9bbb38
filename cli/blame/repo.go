package blame

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/cli/command"
	sharecli "github.com/loomhq/loom/cli/share"
	"github.com/loomhq/loom/cli/term"
)

// RepoOptions are the options of loom blame's commands over a
// repository: commits, summary and trace export.
type RepoOptions struct {
	*Options
	// Spec is a commit or a range (commits, trace export); Path a
	// directory or file (summary).
	Spec, Path string
	// Output is where trace export writes ("" or "-": standard output).
	Output string
	// Markdown writes pr's report as a pull request comment's body.
	Markdown bool
	// Share publishes pr's sessions as share links (through ShareEnv),
	// until Expires, paths hidden with HidePaths; Yes without asking.
	Share, HidePaths, Yes bool
	Expires               string
	ShareEnv              sharecli.Env
	// All writes the notes of every commit of HEAD's history.
	All bool
}

func newRepoOptions(inv *command.Invocation) *RepoOptions {
	return &RepoOptions{Options: newOptions(inv)}
}

// repo opens the blamer and the work tree of dir (the working directory
// when empty).
func (o *RepoOptions) repo(ctx context.Context, dir string) (*blame.Blamer, loom.Store, blame.Git, string, error) {
	b, st, err := o.blamer(ctx)
	if err != nil {
		return nil, nil, blame.Git{}, "", err
	}
	cwd, err := o.Cwd()
	if err != nil {
		return nil, nil, blame.Git{}, "", err
	}
	if dir == "" {
		dir = cwd
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, nil, blame.Git{}, "", loom.Errorf(loom.ENOTFOUND, "%s: no such file or directory", o.Path)
	}
	base := dir
	if !fi.IsDir() {
		base = filepath.Dir(dir)
	}
	top, err := blame.Toplevel(ctx, "", base)
	if err != nil {
		return nil, nil, blame.Git{}, "", err
	}
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	rel, _ := filepath.Rel(top, dir)
	if rel == "." {
		rel = ""
	}
	if b.Traces, err = readTraces(top, o.Traces, o.NoTraces); err != nil {
		return nil, nil, blame.Git{}, "", err
	}
	return b, st, blame.Git{Dir: top}, filepath.ToSlash(rel), nil
}

// repoCommand builds one of the commands over a repository: its
// argument (a commit, a range or a path) goes where arg says, then runF
// (for tests) or run is called with the options.
func repoCommand(inv *command.Invocation, cmd *cobra.Command, arg func(*RepoOptions) *string,
	runF, run func(context.Context, *RepoOptions) error) (*cobra.Command, *RepoOptions) {
	opts := newRepoOptions(inv)
	addTeamFlags(cmd, opts.Options)
	cmd.Args = command.ArgsBetween(0, 1)
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 1 {
			*arg(opts) = args[0]
		}
		opts.User, opts.JSON = inv.User(), inv.JSON()
		if runF != nil {
			return runF(c.Context(), opts)
		}
		return run(c.Context(), opts)
	}
	return cmd, opts
}

func newCmdCommits(inv *command.Invocation, runF func(context.Context, *RepoOptions) error) *cobra.Command {
	cmd, _ := repoCommand(inv, &cobra.Command{
		Use:   "commits [REV | A..B]",
		Short: "Show the sessions behind a commit or a range of commits",
		Long: `Show, for a commit (HEAD by default) or each commit of a range such as a
pull request's (main..feature), the agent sessions behind the lines it
brought in: session, agent, model, turns, lines and files, with how
many of the commit's lines agents wrote, humans changed after an agent
(mixed), humans wrote, or no one can tell (unknown).`,
		Example: `  loom blame commits
  loom blame commits main..my-branch
  loom blame commits HEAD~3 --json | jq '.[].sessions[].session_id'`,
	}, func(o *RepoOptions) *string { return &o.Spec }, runF, commitsRun)
	return cmd
}

func commitsRun(ctx context.Context, o *RepoOptions) error {
	b, st, g, _, err := o.repo(ctx, "")
	if err != nil {
		return err
	}
	cs, err := b.Commits(ctx, g, o.Spec)
	if err != nil {
		return err
	}
	if o.JSON {
		return command.WriteJSON(o.IO.Out, cs)
	}
	col := o.IO.ColorScheme()
	for i, c := range cs {
		if i > 0 {
			fmt.Fprintln(o.IO.Out)
		}
		fmt.Fprintf(o.IO.Out, "%s %s\n", col.Yellow(c.SHA[:min(12, len(c.SHA))]), term.SanitizeLine(c.Subject))
		fmt.Fprintf(o.IO.Out, "  %s\n", tallyLine(c.Lines))
		for _, s := range c.Sessions {
			printSession(ctx, o.Options, st, s)
		}
	}
	return nil
}

// tallyLine says how many lines are whose.
func tallyLine(t blame.Tally) string {
	return fmt.Sprintf("%d lines: %d by agents, %d mixed, %d by humans, %d unknown (%.0f%% agents)",
		t.Total, t.Agent, t.Mixed, t.Human, t.Unknown, 100*t.Share())
}

func printSession(ctx context.Context, o *Options, st loom.Store, s blame.Sessions) {
	turns := make([]string, len(s.Turns))
	for i, t := range s.Turns {
		turns[i] = fmt.Sprint(t)
	}
	mixed := ""
	if s.Mixed > 0 {
		mixed = fmt.Sprintf(" (+%d mixed)", s.Mixed)
	}
	id := o.DisplayID(ctx, o.storeOf(st, s.SessionID), s.SessionID)
	if s.Member != "" {
		id += " @" + s.Member
	}
	fmt.Fprintf(o.IO.Out, "  %s %s %s, turns %s: %d lines%s in %s\n", o.IO.ColorScheme().Cyan(id),
		term.SanitizeLine(s.Agent), term.SanitizeLine(s.Model), strings.Join(turns, ","), s.Lines, mixed, term.SanitizeLine(strings.Join(s.Files, ", ")))
}

func newCmdSummary(inv *command.Invocation, runF func(context.Context, *RepoOptions) error) *cobra.Command {
	cmd, _ := repoCommand(inv, &cobra.Command{
		Use:   "summary [PATH]",
		Short: "Show the share of lines agents wrote, by directory, agent and model",
		Long: `Blame every file git tracks under PATH (the repository by default), as
the work tree has them, and show the share of their lines agents wrote
(mixed lines count half), in all, by directory, by agent and by model,
with the sessions behind them. Binary files are left out. Each file
gets the answer loom blame FILE gives it; git blames the files on every
core at once, and what git and the store tell of the repository is
asked once for all of them. What git said of the files' lines is kept
in loom's cache as one file for PATH: a second summary asks git only of
the commits since, and so does loom blame FILE of a file under PATH.`,
		Example: `  loom blame summary
  loom blame summary internal/ --json | jq '.by_agent'
  loom blame summary lib/ --json | jq '.lines'
  loom blame summary lib/ && loom blame lib/app.ex`,
	}, func(o *RepoOptions) *string { return &o.Path }, runF, summaryRun)
	return cmd
}

func summaryRun(ctx context.Context, o *RepoOptions) error {
	// A summary's process lives a few seconds, most of what it
	// allocates each file's answer, counted and dropped.
	gcForOneFile()
	b, st, g, rel, err := o.repo(ctx, o.Path)
	if err != nil {
		return err
	}
	s, err := b.Summarize(ctx, g, rel)
	if err != nil {
		return err
	}
	for _, n := range s.Notes {
		fmt.Fprintln(o.IO.ErrOut, term.SanitizeLine(n))
	}
	if o.JSON {
		return command.WriteJSON(o.IO.Out, s)
	}
	w, cs := o.IO.Out, o.IO.ColorScheme()
	where := s.Repo
	if s.Path != "" {
		where += "/" + s.Path
	}
	fmt.Fprintf(w, "%s: %d files\n  %s\n", term.SanitizeLine(where), s.Files, tallyLine(s.Lines))
	if len(s.ByDir) > 1 {
		fmt.Fprintf(w, "\n%s\n", cs.Bold("by directory"))
		for _, d := range slices.Sorted(maps.Keys(s.ByDir)) {
			fmt.Fprintf(w, "  %-30s %s\n", term.SanitizeLine(d), tallyLine(s.ByDir[d]))
		}
	}
	for _, by := range []struct {
		title    string
		m, mixed map[string]int
	}{{"by agent", s.ByAgent, s.MixedByAgent}, {"by model", s.ByModel, s.MixedByModel}} {
		if len(by.m) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", cs.Bold(by.title))
		keys := slices.SortedFunc(maps.Keys(by.m), func(a, b string) int { return by.m[b] - by.m[a] })
		for _, k := range keys {
			mixed := ""
			if by.mixed[k] > 0 {
				mixed = fmt.Sprintf(", %d mixed", by.mixed[k])
			}
			// Mixed lines count half here as in the total, so that the
			// shares add up to it.
			fmt.Fprintf(w, "  %-30s %d lines%s (%.0f%%)\n", term.SanitizeLine(command.OrDash(k)), by.m[k], mixed, 100*s.Share(by.m[k], by.mixed[k]))
		}
	}
	if len(s.Sessions) > 0 {
		fmt.Fprintf(w, "\n%s\n", cs.Bold("sessions"))
		for _, ss := range s.Sessions {
			printSession(ctx, o.Options, st, ss)
		}
	}
	return nil
}

func newCmdTrace(inv *command.Invocation) *cobra.Command {
	return command.Group(&cobra.Command{
		Use:   "trace",
		Short: "Agent Trace records: export what loom knows, read what others wrote",
		Long: `Agent Trace (github.com/cursor/agent-trace, version 0.1.0) is an open
format for "these lines of this file at this revision came from this
conversation and model". loom blame reads such records from the
repository's .agent-trace/traces.jsonl and from --trace files; loom
blame trace export writes loom's attribution as records.`,
		Example: `  loom blame trace export -o head.jsonl
  loom blame --trace head.jsonl src/app.ts`,
	}, newCmdTraceExport(inv, nil))
}

func newCmdTraceExport(inv *command.Invocation, runF func(context.Context, *RepoOptions) error) *cobra.Command {
	cmd, opts := repoCommand(inv, &cobra.Command{
		Use:   "export [REV | A..B]",
		Short: "Write Agent Trace records of a commit or a range",
		Long: `Write loom's attribution as Agent Trace records (version 0.1.0), one JSON
record a line: for a commit (HEAD by default), one record of every file
it holds that agents wrote lines of; for a range (main..feature), one
record per commit, of the files it changed. Each conversation is a
session's turn (loom://session/ID?turn=N), with its model; loom's own
details (agent, message) are under metadata."dev.loom".

Nothing is written into the repository unless -o names a file there:
-o .agent-trace/traces.jsonl adds the records where the reference
implementation and other tools read them.`,
		Example: `  loom blame trace export > head.jsonl
  loom blame trace export main..feature -o .agent-trace/traces.jsonl`,
	}, func(o *RepoOptions) *string { return &o.Spec }, runF, exportRun)
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "append the records to this file (standard output when empty or -)")
	return cmd
}

func exportRun(ctx context.Context, o *RepoOptions) error {
	b, _, g, _, err := o.repo(ctx, "")
	if err != nil {
		return err
	}
	recs, err := b.Export(ctx, g, o.Spec, o.Version)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if o.Output == "" || o.Output == "-" {
		_, err := o.IO.Out.Write(buf.Bytes())
		return err
	}
	path := o.Output
	if !filepath.IsAbs(path) {
		cwd, err := o.Cwd()
		if err != nil {
			return err
		}
		path = filepath.Join(cwd, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "%d Agent Trace records appended to %s\n", len(recs), term.SanitizeLine(o.Output))
	return nil
}

func newCmdNotes(inv *command.Invocation, runF func(context.Context, *RepoOptions) error) *cobra.Command {
	cmd, opts := repoCommand(inv, &cobra.Command{
		Use:   "notes [REV | A..B]",
		Short: "Write loom's attributions as git notes of the Git AI standard",
		Long: `Write, for a commit (HEAD by default), each commit of a range, or with
--all every commit of HEAD's history, the lines it brought in that
agents' sessions wrote as an authorship log of the Git AI standard
(authorship/3.0.0): a git note under refs/notes/ai, which git-ai's
tools and CI read, and which travels with the repository once pushed
(git push origin refs/notes/ai). A commit no agent wrote lines of gets
no note; a note loom writes replaces the commit's note.

loom blame reads the notes it finds, loom's and git-ai's: their lines
are credited to their sessions where no session loom holds accounts
for them, so a clone with the notes fetched (git fetch origin
refs/notes/ai:refs/notes/ai) blames as the machine that wrote them.`,
		Example: `  loom blame notes
  loom blame notes main..feature && git push origin refs/notes/ai
  loom blame notes --all`,
	}, func(o *RepoOptions) *string { return &o.Spec }, runF, notesRun)
	cmd.Flags().BoolVar(&opts.All, "all", false, "write the notes of every commit of HEAD's history (at most 1,000)")
	return cmd
}

func notesRun(ctx context.Context, o *RepoOptions) error {
	b, _, g, _, err := o.repo(ctx, "")
	if err != nil {
		return err
	}
	spec := o.Spec
	if o.All {
		if spec != "" {
			return command.UsageErrorf("--all takes no commit or range")
		}
		spec = blame.AllCommits
	}
	n, err := b.Notes(ctx, g, spec, o.Version)
	if err != nil {
		return err
	}
	if o.JSON {
		return command.WriteJSON(o.IO.Out, map[string]any{"notes": n, "ref": blame.NotesRef})
	}
	fmt.Fprintf(o.IO.Out, "%d notes written to %s (git push origin %s shares them)\n", n, blame.NotesRef, blame.NotesRef)
	return nil
}
