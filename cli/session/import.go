package session

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/pricing"
)

// ImportOptions are the options of `loom session import`.
type ImportOptions struct {
	IO *term.IOStreams
	// ReadStore opens the store to read.
	ReadStore func(context.Context) (loom.Engine, error)
	// CreateStore opens the store, creating it if missing.
	CreateStore func(context.Context) (loom.Engine, error)
	// Cwd is the working directory.
	Cwd func() (string, error)
	// Formats are the other agents' session formats.
	Formats []importer.Format
	Getenv  func(string) string
	Home    func() string
	Now     func() time.Time
	// ImportProject is the project of a directory an import met.
	ImportProject func(dir string) loom.Project
	// AdoptImported moves what an import put under a project's path id
	// to the project.
	AdoptImported func(ctx context.Context, st loom.Engine)
	// StartSummaries summarises quiet sessions in the background, with
	// --watch, where config.toml's [summaries] enabled is true.
	StartSummaries func(ctx context.Context, st loom.Store, log *slog.Logger)
	// RedactTitle gives a session's title as a line printed shows it:
	// redacted when the store redacts what it writes ([secrets]
	// redact_on_write), so that no line --watch prints holds what the
	// store does not; nil prints titles as they are.
	RedactTitle func(string) string
	User        string
	JSON        bool

	Files []string
	// From is the tool whose sessions to import (--from), or "all".
	From   string
	Watch  bool
	DryRun bool
	// Rescan reads every file again and repairs what importers that
	// raced on it made (importer.Importer.Rescan).
	Rescan bool
	Since  time.Time
	// Hook is the tool whose hook (or notify program) runs the command:
	// it names the session that just changed (see importHook).
	Hook string
}

func newCmdSessionImport(inv *command.Invocation, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{
		IO:            inv.IO,
		ReadStore:     inv.ReadStore,
		CreateStore:   inv.CreateStore,
		Cwd:           inv.Cwd,
		Formats:       inv.Formats,
		Getenv:        inv.Getenv,
		Home:          inv.Home,
		Now:           inv.TimeNow,
		ImportProject: inv.ImportProject,
		AdoptImported: inv.AdoptImported,

		StartSummaries: func(ctx context.Context, st loom.Store, log *slog.Logger) {
			command.StartSummaries(ctx, inv, st, log)
		},
		RedactTitle: inv.RedactOnWrite,
	}
	var since string
	cmd := &cobra.Command{
		Use:   "import {FILE... | --from TOOL [PATH...]}",
		Short: "Read sessions from loom's exports, or from other agents",
		Long: `Read sessions written by loom session export (jsonl or json; the format
is recognised from the content) into the store, as the current user.
"-" reads standard input. Every record of every file is checked before
anything is written: a bad record is reported as FILE:LINE: reason and
nothing is imported. A session the store holds already is left out
when it holds every message of the file's, and comes in beside it as
"T (imported)" when the two went on differently; importing the same
file again adds nothing.

With --from, import the sessions of another agent instead (--from list
shows every agent loom reads, where each keeps its sessions on this
machine and how many it holds), or of all of them. PATH is a session file or a
directory; without one, the tool's own location is read, honouring the
variable the tool itself reads to move it (CLAUDE_CONFIG_DIR, CODEX_HOME,
PI_CODING_AGENT_DIR …: docs/import.md has each tool's).
Importing is incremental: unchanged files are not read again, a session
that grew gets only its new messages, and nothing is duplicated.
--watch keeps running and imports changes as the tools write them.
--rescan reads every file again whatever its record says, and repairs
sessions that importers racing on one file split into forks keyed
SOURCE@… or stored twice: they are put back as one import of the file
makes them, and nothing that is not in the file is removed.

With --hook TOOL, the command is a tool's hook: Claude Code's Stop or
SessionEnd hook and Gemini CLI's AfterAgent or SessionEnd hook pass JSON
on standard input that names the session's file (transcript_path);
Codex's notify program gets JSON as its last argument that names the
thread. Only that session is imported, quietly (--json prints the
report); a failure is one line on stderr and exit status 1, never 2,
which Claude Code would take as a request to keep going.
Imported sessions are listed with their tool as surface, and resuming
one continues in a fork of it. See docs/import.md.`,
		Example: `  loom session import session.jsonl
  ssh old-laptop loom session export --all | loom session import -
  loom session import --from list
  loom session import --from all
  loom session import --from claude-code --dry-run --json
  loom session import --from codex ~/backup/codex/sessions --since 2026-06-01
  loom session import --from windsurf ~/Downloads
  loom session import --from all --watch
  loom session import --from claude-code --rescan
  loom session import --hook claude-code < hook-input.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if err := checkImportFlags(opts, args, since, inv.TimeNow); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return importRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "import another agent's sessions: "+agentNames(inv.Formats)+" or all; list shows which are on this machine")
	cmd.Flags().BoolVarP(&opts.Watch, "watch", "w", false, "keep running and import changes as they are written (with --from)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "report what would be imported without writing (with --from)")
	cmd.Flags().BoolVar(&opts.Rescan, "rescan", false, "read every file again, whatever its record, and repair sessions that importers racing on one file left split or doubled (with --from)")
	cmd.Flags().StringVar(&since, "since", "", "only files changed since DATE (2026-06-01, RFC 3339, or an age like 7d)")
	cmd.Flags().StringVar(&opts.Hook, "hook", "", "run from TOOL's hook: import the one session its JSON (stdin, or Codex's notify argument) names; claude-code, codex or gemini")
	return cmd
}

// checkImportFlags checks that the flags and arguments of session
// import go together, and sets opts.Since from --since.
func checkImportFlags(opts *ImportOptions, args []string, since string, now func() time.Time) error {
	switch {
	case opts.Hook != "":
		if opts.From != "" || opts.Watch || opts.DryRun || opts.Rescan || since != "" {
			return hookError(command.UsageErrorf("--hook goes alone: the hook's JSON names the session"))
		}
	case opts.From == "":
		switch {
		case len(args) == 0:
			return command.UsageErrorf("give the FILEs to import, or --from TOOL")
		case opts.Watch || opts.DryRun || opts.Rescan || since != "":
			return command.UsageErrorf("--watch, --dry-run, --rescan and --since go with --from TOOL")
		}
	case opts.From == "list":
		if len(args) > 0 || opts.Watch || opts.DryRun || opts.Rescan || since != "" {
			return command.UsageErrorf("--from list goes alone: it lists every agent loom reads")
		}
	default:
		if opts.Rescan && opts.Watch {
			return command.UsageErrorf("--rescan reads every file once: it does not go with --watch")
		}
		if _, err := importTargets(opts, opts.From, nil); err != nil {
			return err
		}
		if since != "" {
			t, err := human.ParseTime(since, now())
			if err != nil {
				return command.UsageErrorf("--since: %v", err)
			}
			opts.Since = t
		}
	}
	return nil
}

// importRun does the import opts ask for: a tool's hook's (--hook), the
// list of agents (--from list), another agent's sessions (--from TOOL)
// or loom's export files.
func importRun(ctx context.Context, opts *ImportOptions) error {
	switch {
	case opts.Hook != "":
		return hookError(importHook(ctx, opts))
	case opts.From == "list":
		return importList(ctx, opts)
	case opts.From != "":
		return importFromRun(ctx, opts)
	}
	return importFilesRun(ctx, opts)
}

// importTargets are the tools --from names, with where to read each:
// the PATHs given, else the tool's own location.
func importTargets(opts *ImportOptions, from string, paths []string) ([]importer.Target, error) {
	var out []importer.Target
	home := opts.Home()
	for _, fm := range opts.Formats {
		if from != "all" && from != fm.Tool() {
			continue
		}
		t := importer.Target{Format: fm, Roots: fm.Roots(opts.Getenv, home)}
		if len(paths) > 0 {
			t.Roots, t.Explicit = paths, true
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, command.UsageErrorf("--from %q: want %s, all, or list", from, agentNames(opts.Formats))
	}
	return out, nil
}

func importFromRun(ctx context.Context, opts *ImportOptions) error {
	var abs []string
	for _, p := range opts.Files {
		if !filepath.IsAbs(p) {
			wd, err := opts.Cwd()
			if err != nil {
				return err
			}
			p = filepath.Join(wd, p)
		}
		abs = append(abs, filepath.Clean(p))
	}
	targets, err := importTargets(opts, opts.From, abs)
	if err != nil {
		return err
	}
	if len(abs) > 0 && opts.From == "all" {
		return command.UsageErrorf("name one tool with --from when giving PATHs")
	}
	var st loom.Engine
	if opts.DryRun {
		st, err = opts.ReadStore(ctx)
	} else {
		st, err = opts.CreateStore(ctx)
	}
	if err != nil {
		return err
	}
	im := newImporter(opts, st)
	im.DryRun, im.Since, im.Rescan = opts.DryRun, opts.Since, opts.Rescan
	if !opts.Watch {
		rep, err := im.Run(ctx, targets)
		if err != nil {
			return err
		}
		if !opts.DryRun {
			opts.AdoptImported(ctx, st)
		}
		if err := printImportReport(opts, rep); err != nil {
			return err
		}
		return failedFiles(rep)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !opts.JSON {
		fmt.Fprintf(opts.IO.ErrOut, "Watching %s for changes; Ctrl+C stops.\n", watchedNames(targets))
	}
	if opts.StartSummaries != nil && !opts.DryRun {
		opts.StartSummaries(ctx, st, slog.New(slog.NewTextHandler(opts.IO.ErrOut, nil)))
	}
	first := true
	err = im.Watch(ctx, targets, importer.WatchOptions{}, func(rep *importer.Report) {
		if !opts.DryRun {
			opts.AdoptImported(ctx, st)
		}
		switch {
		case opts.JSON || first && rep.Changed():
			printImportReport(opts, rep)
		case rep.Changed():
			printImportChanges(opts, rep)
		}
		first = false
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// importer is an importer of other agents' sessions into st, for the
// current user, pricing by loom's table and finding projects by loom's
// rule. After an import that writes, adoptImported moves the earlier
// sessions of the projects it met that are identified by a remote.
func newImporter(opts *ImportOptions, st loom.Engine) *importer.Importer {
	return &importer.Importer{Store: st, UserID: opts.User, Now: opts.Now, Price: pricing.Cost, Project: opts.ImportProject}
}

func watchedNames(targets []importer.Target) string {
	var names []string
	for _, t := range targets {
		names = append(names, t.Format.Tool())
	}
	return strings.Join(names, ", ")
}

// sessionFileNames says how each tool names the session files an import
// looks for under a directory.
var sessionFileNames = map[string]string{
	"claude-code": "<session id>.jsonl",
	"codex":       "rollout-*.jsonl (or .jsonl.zst)",
	"gemini":      "session-*.json or session-*.jsonl, in chats/",
	"opencode":    "opencode.db (or storage/session/)",
}

// printImportReport prints what an import did, per tool: as one JSON
// object with --json. Paths, skipped record types and problems come from
// the tools' files and are escaped for the terminal.
func printImportReport(opts *ImportOptions, rep *importer.Report) error {
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, rep)
	}
	cs := opts.IO.ColorScheme()
	w := opts.IO.Out
	if rep.DryRun {
		fmt.Fprintln(w, cs.Bold("Dry run: nothing was written."))
	}
	// Of several tools (--from all), those not on this machine and
	// those with no location are one line each, after the others: with
	// every agent loom reads, a line each would bury what was imported.
	var absent, placeless []string
	several := len(rep.Tools) > 1
	for _, t := range rep.Tools {
		if len(t.Roots) == 0 {
			if several {
				placeless = append(placeless, t.Tool)
				continue
			}
			fmt.Fprintf(w, "%s  %s\n", cs.Bold(t.Tool), cs.Gray("no location of its own: name a PATH (loom session import --from "+t.Tool+" PATH)"))
			continue
		}
		if t.RootsFound == 0 && t.ProblemCount == 0 {
			if several {
				absent = append(absent, t.Tool)
				continue
			}
			fmt.Fprintf(w, "%s  %s\n", cs.Bold(t.Tool), cs.Gray("nothing at "+term.SanitizeLine(strings.Join(t.Roots, ", "))))
			continue
		}
		fmt.Fprintf(w, "%s  %s\n", cs.Bold(t.Tool), cs.Gray(term.SanitizeLine(strings.Join(t.Roots, ", "))))
		fmt.Fprintf(w, "  files     %s read, %s unchanged", human.Count(int64(t.FilesRead)), human.Count(int64(t.FilesUnchanged)))
		if t.FilesFailed > 0 {
			fmt.Fprintf(w, ", %s", cs.Yellow(human.Count(int64(t.FilesFailed))+" could not be read"))
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  sessions  %s new, %s grown, %s unchanged\n", human.Count(int64(t.SessionsNew)), human.Count(int64(t.SessionsGrown)), human.Count(int64(t.SessionsUnchanged)))
		if t.SessionsRepaired > 0 {
			fmt.Fprintf(w, "  repaired  %s sessions, %s stray forks merged back, %s duplicate messages removed\n",
				human.Count(int64(t.SessionsRepaired)), human.Count(int64(t.ForksMerged)), human.Count(int64(t.MessagesRemoved)))
		}
		fmt.Fprintf(w, "  messages  %s added", human.Count(int64(t.MessagesAdded)))
		if t.ToolsUpdated > 0 {
			fmt.Fprintf(w, ", %s tool results completed", human.Count(int64(t.ToolsUpdated)))
		}
		fmt.Fprintln(w)
		if len(t.Skipped) > 0 {
			var parts []string
			for _, k := range t.SkippedTypes() {
				parts = append(parts, human.Count(int64(t.Skipped[k]))+" "+term.SanitizeLine(k))
			}
			fmt.Fprintf(w, "  skipped   %s\n", strings.Join(parts, ", "))
		}
		fmt.Fprintf(w, "  time      %s\n", human.Duration(t.Elapsed))
		if t.FilesRead+t.FilesUnchanged+t.FilesFailed == 0 && t.ProblemCount == 0 {
			// A directory that holds no file of the tool's naming.
			if names := sessionFileNames[t.Tool]; names != "" {
				fmt.Fprintf(w, "  %s\n", cs.Gray("no session files there: "+t.Tool+" names them "+names+"; name a file to import it whatever its name"))
			}
		}
		if t.ProblemCount > 0 {
			fmt.Fprintf(w, "  %s %s:\n", cs.Yellow("problems"), human.Count(int64(t.ProblemCount)))
			for i, p := range t.Problems {
				if i == 10 {
					fmt.Fprintf(w, "    … and %s more (--json lists up to 1,000)\n", human.Count(int64(t.ProblemCount-10)))
					break
				}
				fmt.Fprintf(w, "    %s\n", term.SanitizeLine(p.String()))
			}
		}
	}
	if len(absent) > 0 {
		fmt.Fprintln(w, cs.Gray(opts.IO.WrapErr("Not on this machine: "+strings.Join(absent, ", ")+" (loom session import --from list says where loom looked).")))
	}
	if len(placeless) > 0 {
		fmt.Fprintln(w, cs.Gray(opts.IO.WrapErr("No location of their own, name a PATH: "+strings.Join(placeless, ", ")+" (loom session import --from TOOL PATH).")))
	}
	if len(rep.Tools) == 0 {
		fmt.Fprintln(w, "Nothing to import.")
	}
	return nil
}

// printImportChanges prints what one change to the watched files did, a
// line a session or problem: "claude-code: +2 messages in Fix the flaky
// test". The first import of --watch prints the whole report instead.
func printImportChanges(opts *ImportOptions, rep *importer.Report) {
	cs := opts.IO.ColorScheme()
	w := opts.IO.Out
	for _, t := range rep.Tools {
		for _, c := range t.Changes {
			title := c.Title
			if opts.RedactTitle != nil {
				title = opts.RedactTitle(title)
			}
			if title == "" {
				title = "session " + c.SessionID
			}
			what := "updated"
			switch {
			case c.New:
				what = "new session, " + human.Plural(c.Messages, "message") + ":"
			case c.Messages > 0:
				what = "+" + human.Plural(c.Messages, "message") + " in"
			}
			fmt.Fprintf(w, "%s %s %s\n", cs.Bold(t.Tool+":"), what, term.SanitizeLine(title))
		}
		for _, p := range t.Problems {
			fmt.Fprintf(w, "%s %s %s\n", cs.Bold(t.Tool+":"), cs.Yellow("problem:"), term.SanitizeLine(p.String()))
		}
	}
}

// failedFiles is the error of an import some of whose files could not be
// read at all (the rest was imported): hooks and cron jobs notice it by
// the exit status.
func failedFiles(rep *importer.Report) error {
	n := rep.FilesFailed()
	if n == 0 {
		return nil
	}
	// "Everything else" only where there was something else: a path
	// that does not exist is the whole import.
	rest := "nothing was imported"
	for _, t := range rep.Tools {
		if t.FilesRead+t.FilesUnchanged > 0 {
			rest = "everything else was imported"
		}
	}
	if fs := rep.Failures(); n == 1 && len(fs) == 1 {
		return fmt.Errorf("1 file could not be read: %s; %s", term.SanitizeLine(fs[0].String()), rest)
	}
	return fmt.Errorf("%s could not be read (see problems); %s", human.Plural(n, "file"), rest)
}
