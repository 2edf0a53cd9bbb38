// Package hooks is loom hooks: it writes loom's import and recall hooks
// into the agents' own settings files, shows which are there, and takes
// them out again, leaving everything else in those files as it was.
package hooks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/importer"
)

// agent is one program whose settings loom's hooks go into.
type agent struct {
	name, label string
	// dir is the program's own directory (its environment variable, else
	// under the home directory); file is its settings file in dir.
	envVar string
	rel    []string
	file   string
	// imports and recalls are the events that run `loom session import
	// --hook NAME` and `loom recall --hook NAME`; a program with none of
	// the latter cannot be handed context by a hook.
	imports, recalls []string
	// observes are the events before and after a tool call that run
	// `loom blame observe --hook NAME`, for the calls of shell, its
	// shell tool (the hooks' matcher): what each command changed in
	// the work tree is recorded for loom blame.
	observes []string
	shell    string
}

var agents = []agent{
	{name: "claude-code", label: "Claude Code", envVar: "CLAUDE_CONFIG_DIR", rel: []string{".claude"}, file: "settings.json",
		imports: []string{"Stop", "SessionEnd"}, recalls: []string{"SessionStart", "UserPromptSubmit"},
		observes: []string{"PreToolUse", "PostToolUse", "PostToolUseFailure"}, shell: "Bash"},
	{name: "gemini", label: "Gemini CLI", envVar: "GEMINI_CLI_HOME", rel: []string{".gemini"}, file: "settings.json",
		imports: []string{"AfterAgent", "SessionEnd"}, recalls: []string{"SessionStart", "BeforeAgent"},
		observes: []string{"BeforeTool", "AfterTool"}, shell: "run_shell_command"},
	// Codex runs one notify program after each turn; it has no hook that
	// adds context to a prompt.
	{name: "codex", label: "Codex CLI", envVar: "CODEX_HOME", rel: []string{".codex"}, file: "config.toml",
		imports: []string{"notify"}},
}

// Places says where the agents' directories are: the environment
// (their variables) and the home directory.
type Places struct {
	Getenv func(string) string
	Home   func() string
}

func (a agent) dir(pl Places) string {
	if a.name == "gemini" {
		// GEMINI_CLI_HOME stands for the home directory, not ~/.gemini.
		if d := pl.Getenv(a.envVar); d != "" {
			return filepath.Join(d, ".gemini")
		}
		return filepath.Join(pl.Home(), ".gemini")
	}
	return importer.ToolDir(pl.Getenv, pl.Home(), a.envVar, a.rel...)
}

func (a agent) path(pl Places) string { return filepath.Join(a.dir(pl), a.file) }

func (a agent) importArgs() string  { return "session import --hook " + a.name }
func (a agent) recallArgs() string  { return "recall --hook " + a.name }
func (a agent) observeArgs() string { return "blame observe --hook " + a.name }

// Report is what install, uninstall and the bare command say about one
// agent (--json prints a list of them).
type Report struct {
	Agent string `json:"agent"`
	File  string `json:"file"`
	// Import and Recall say whether loom's hooks of each kind are in the
	// file once the command is done.
	Import bool `json:"import"`
	Recall bool `json:"recall"`
	// Observe says whether the hooks around the agent's shell calls
	// that record what they changed (for loom blame) are there.
	Observe bool `json:"observe,omitempty"`
	// Added and Removed name the events the command changed; Updated
	// those whose hook ran another loom (one since moved, or a bare
	// "loom") and now runs this one.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Updated []string `json:"updated,omitempty"`
	// Program is what loom's import hook runs (status only), and
	// Problem, when set, why an agent cannot run it: a hook that is
	// there but does not run is no hook.
	Program string `json:"program,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// Options are the options of `loom hooks`, which shows the hooks.
type Options struct {
	IO *term.IOStreams
	Places
	JSON bool
}

// ChangeOptions are the options of `loom hooks install` and `uninstall`.
type ChangeOptions struct {
	IO *term.IOStreams
	Places
	// Program is how a hook runs this loom.
	Program func() string
	JSON    bool

	// Install is true for install, false for uninstall.
	Install bool
	// Agents are the agents named (none: every one found).
	Agents []string
	Recall bool
	DryRun bool
}

// NewCmdHooks builds loom hooks and its install and uninstall. runF,
// when not nil, is called with the options of the bare command instead
// of running it (for tests).
func NewCmdHooks(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: inv.IO, Places: placesOf(inv)}
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Show, install or remove loom's hooks in Claude Code, Gemini CLI and Codex",
		Long: `With no sub-command, show which of loom's hooks each agent's settings
file holds, and whether the loom they name runs. The import hooks bring each turn into loom as the agent ends
it (loom session import --hook); the recall hooks hand the agent what
past sessions of the project said (loom recall --hook), in projects where
loom recall enable was run.`,
		Example: `  loom hooks
  loom hooks install                 # import hooks for every agent found
  loom hooks install --recall claude-code
  loom hooks uninstall gemini`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
	cmd.AddCommand(newCmdChange(inv, true, nil), newCmdChange(inv, false, nil))
	return cmd
}

func placesOf(inv *command.Invocation) Places { return Places{Getenv: inv.Getenv, Home: inv.Home} }

// newCmdChange builds loom hooks install, or uninstall.
func newCmdChange(inv *command.Invocation, install bool, runF func(*ChangeOptions) error) *cobra.Command {
	opts := &ChangeOptions{IO: inv.IO, Places: placesOf(inv), Program: hookCommand, Install: install}
	runE := func(cmd *cobra.Command, args []string) error {
		opts.Agents, opts.JSON = args, inv.JSON()
		if runF != nil {
			return runF(opts)
		}
		return changeRun(cmd.Context(), opts)
	}
	if !install {
		un := &cobra.Command{
			Use:     "uninstall [AGENT...]",
			Short:   "Take loom's hooks out of agents' settings",
			Example: "  loom hooks uninstall\n  loom hooks uninstall codex",
			RunE:    runE,
		}
		un.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would change and write nothing")
		return un
	}
	in := &cobra.Command{
		Use:   "install [AGENT...]",
		Short: "Add loom's import hooks (and recall hooks with --recall) to agents' settings",
		Long: `Add loom's hooks to the settings files of the agents named (claude-code,
gemini, codex), or of every one of them found under the home directory.
Besides the import hooks it adds the hooks around each shell call
(Claude Code's Bash, Gemini CLI's run_shell_command) that record what
the call changed in the work tree, for loom blame (loom blame observe).
Everything else in those files is kept as it was, and a hook already
there is not added twice. Codex has one notify program: when it already
runs another one, loom's is not added (call both from a script).`,
		Example: `  loom hooks install
  loom hooks install --recall claude-code gemini
  loom hooks install --dry-run`,
		RunE: runE,
	}
	in.Flags().BoolVar(&opts.Recall, "recall", false, "also add the recall hooks (Claude Code and Gemini CLI)")
	in.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would change and write nothing")
	return in
}

// pick is the agents named, or with none named every agent whose
// directory exists.
func pick(pl Places, names []string) ([]agent, error) {
	if len(names) == 0 {
		var found []agent
		for _, a := range agents {
			if fi, err := os.Stat(a.dir(pl)); err == nil && fi.IsDir() {
				found = append(found, a)
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("no Claude Code, Gemini CLI or Codex directory under %s: name the agent (loom hooks install claude-code)", pl.Home())
		}
		return found, nil
	}
	var out []agent
	for _, n := range names {
		i := slices.IndexFunc(agents, func(a agent) bool { return a.name == n })
		if i < 0 {
			return nil, command.UsageErrorf("unknown agent %q: want claude-code, gemini or codex", n)
		}
		if !slices.ContainsFunc(out, func(a agent) bool { return a.name == n }) {
			out = append(out, agents[i])
		}
	}
	return out, nil
}

func statusOf(pl Places, a agent) (*Report, error) {
	r := &Report{Agent: a.name, File: a.path(pl)}
	b, err := readFile(r.File)
	if err != nil || b == nil {
		return r, err
	}
	if a.name == "codex" {
		cmd, err := codexNotify(b)
		if err != nil {
			return r, fmt.Errorf("%s: %w", r.File, err)
		}
		r.Import = isLoom(strings.Join(cmd, " "), a.importArgs())
		if r.Import {
			r.Program = cmd[0]
		}
		return r, nil
	}
	s, err := parseSettings(b)
	if err != nil {
		return r, fmt.Errorf("%s: %w", r.File, err)
	}
	r.Import = s.has(a.imports, a.importArgs())
	r.Recall = len(a.recalls) > 0 && s.has(a.recalls, a.recallArgs())
	r.Observe = s.has(a.observes, a.observeArgs())
	for _, ev := range append(slices.Clone(a.imports), a.recalls...) {
		if p := cmp.Or(s.programOf(ev, a.importArgs()), s.programOf(ev, a.recallArgs())); p != "" {
			r.Program = p
			break
		}
	}
	return r, nil
}

// checkRuns sets r.Problem when the agent could not run the loom its
// hooks name: a bare "loom" (found only through a PATH the agent may
// not have), a path that is gone, or a program that does not start.
// runs keeps each program's answer, so that one loom named by every
// agent starts once.
func checkRuns(ctx context.Context, r *Report, runs map[string]string) {
	if r.Program == "" {
		return
	}
	prog := r.Program
	if !filepath.IsAbs(prog) {
		r.Problem = "runs `" + prog + "` by name, which an agent started without loom on its PATH cannot find: `loom hooks install` writes loom's full path"
		return
	}
	problem, ok := runs[prog]
	if !ok {
		problem = startProblem(ctx, prog)
		runs[prog] = problem
	}
	r.Problem = problem
}

// startProblem says why prog (an absolute path to a loom) does not run
// as a hook would run it; "" when `prog version` exits 0.
func startProblem(ctx context.Context, prog string) string {
	if _, err := os.Stat(prog); err != nil {
		return "runs " + prog + ", which is not there any more: `loom hooks install` (or `loom capture install`) writes this loom's path"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, "version")
	cmd.Env = append(os.Environ(), "LOOM_RECALL_WARM=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		why := err.Error()
		if line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); line != "" {
			why = line
		}
		return "runs " + prog + ", which does not start (" + why + "): `loom hooks install` writes this loom's path"
	}
	return ""
}

// statusRun prints, for every agent, which of loom's hooks its file
// holds.
func statusRun(ctx context.Context, opts *Options) error {
	reports, err := Statuses(ctx, opts.Places)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, reports)
	}
	for i, r := range reports {
		yes := func(on bool) string { return map[bool]string{true: "yes", false: "no"}[on] }
		recall := yes(r.Recall)
		if len(agents[i].recalls) == 0 {
			recall = "-"
		}
		fmt.Fprintf(opts.IO.Out, "%-12s import %-3s  recall %-3s  %s\n", agents[i].label, yes(r.Import), recall, shortPath(opts.Places, r.File))
		if r.Problem != "" {
			fmt.Fprintln(opts.IO.Out, opts.IO.WrapErr("  "+opts.IO.ColorScheme().Yellow("does not run")+": "+r.Problem))
		}
	}
	return nil
}

func changeRun(ctx context.Context, opts *ChangeOptions) error {
	install := opts.Install
	if !install {
		// Uninstall takes every hook of loom's out.
		opts.Recall = true
	}
	picked, err := pick(opts.Places, opts.Agents)
	if err != nil {
		return err
	}
	prog := opts.Program()
	var reports []*Report
	var problems []string
	for _, a := range picked {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := apply(opts.Places, a, prog, install, opts.Recall, opts.DryRun)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		reports = append(reports, r)
	}
	if opts.JSON {
		if reports == nil {
			reports = []*Report{}
		}
		if err := command.WriteJSON(opts.IO.Out, reports); err != nil {
			return err
		}
	} else {
		for _, r := range reports {
			i := slices.IndexFunc(agents, func(a agent) bool { return a.name == r.Agent })
			verb, events := "added", r.Added
			if !install {
				verb, events = "removed", r.Removed
			}
			if opts.DryRun {
				verb = "would be " + verb
			}
			what := verb + ": " + strings.Join(events, ", ")
			if len(events) == 0 {
				what = map[bool]string{true: "already there", false: "none there"}[install]
			}
			if len(r.Updated) > 0 {
				up := "updated to run " + prog + ": " + strings.Join(r.Updated, ", ")
				if opts.DryRun {
					up = "would be " + up
				}
				if len(events) == 0 {
					what = up
				} else {
					what += "; " + up
				}
			}
			fmt.Fprintf(opts.IO.Out, "%s (%s): %s\n", agents[i].label, shortPath(opts.Places, r.File), what)
		}
		if install && opts.Recall && len(reports) > 0 {
			fmt.Fprintln(opts.IO.Out, "Recall adds context only in projects where `loom recall enable` was run.")
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// apply installs or removes a's hooks in its settings file.
func apply(pl Places, a agent, prog string, install, recall, dryRun bool) (*Report, error) {
	r := &Report{Agent: a.name, File: a.path(pl)}
	b, err := readFile(r.File)
	if err != nil {
		return nil, err
	}
	var out []byte
	if a.name == "codex" {
		out, err = applyCodex(r, b, prog, a.importArgs(), install)
	} else {
		out, err = applySettings(r, a, b, prog, install, recall)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.File, err)
	}
	if out == nil || dryRun {
		return r, nil
	}
	if err := writeFile(r.File, out); err != nil {
		return nil, err
	}
	return r, nil
}

func applySettings(r *Report, a agent, b []byte, prog string, install, recall bool) ([]byte, error) {
	s, err := parseSettings(b)
	if err != nil {
		return nil, err
	}
	type kind struct {
		events  []string
		args    string
		want    bool
		matcher string
	}
	kinds := []kind{{a.imports, a.importArgs(), install, ""}, {a.recalls, a.recallArgs(), install && recall, ""},
		{a.observes, a.observeArgs(), install, a.shell}}
	for _, k := range kinds {
		for _, ev := range k.events {
			switch {
			case k.want && !s.hasEvent(ev, k.args):
				if err := s.add(ev, k.matcher, shellQuote(prog)+" "+k.args); err != nil {
					return nil, err
				}
				r.Added = append(r.Added, ev)
			case k.want && s.programOf(ev, k.args) != prog:
				// loom's hook runs another loom (moved, or named
				// bare): it runs this one from now on.
				if err := s.remove(ev, k.args); err != nil {
					return nil, err
				}
				if err := s.add(ev, k.matcher, shellQuote(prog)+" "+k.args); err != nil {
					return nil, err
				}
				r.Updated = append(r.Updated, ev)
			case !install && (k.args != a.recallArgs() || recall) && s.hasEvent(ev, k.args):
				if err := s.remove(ev, k.args); err != nil {
					return nil, err
				}
				r.Removed = append(r.Removed, ev)
			}
		}
	}
	r.Import = s.has(a.imports, a.importArgs())
	r.Recall = len(a.recalls) > 0 && s.has(a.recalls, a.recallArgs())
	r.Observe = s.has(a.observes, a.observeArgs())
	if len(r.Added)+len(r.Removed)+len(r.Updated) == 0 {
		return nil, nil
	}
	return s.encode()
}

// hookCommand is how a hook runs this loom: always by an absolute path,
// since an agent may run its hooks with a PATH that lacks loom (a
// desktop app, a service, a shell set up after the agent started). The
// PATH's loom is kept when it is this one, so that a link a package
// manager keeps current (Homebrew's bin/loom) stays what the hook runs
// across upgrades; else the executable itself.
func hookCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "loom"
	}
	if p, err := exec.LookPath("loom"); err == nil && sameFile(p, exe) {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return exe
}

// shellQuote quotes p for the shell that runs a hook's command, when it
// needs to be.
func shellQuote(p string) string {
	if strings.ContainsAny(p, " \t'\"$`\\") {
		return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
	}
	return p
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// isLoom says whether a hook's command line runs loom with args: its
// program is named loom (by any path) and it ends with args.
func isLoom(cmd, args string) bool {
	_, ok := loomProgram(cmd, args)
	return ok
}

// loomProgram is the program of a hook's command line that runs loom
// with args, as the hook names it (a path, or "loom" alone).
func loomProgram(cmd, args string) (string, bool) {
	cmd = strings.TrimSpace(cmd)
	if !strings.HasSuffix(cmd, " "+args) {
		return "", false
	}
	prog := strings.TrimSpace(strings.TrimSuffix(cmd, args))
	if len(prog) >= 2 && prog[0] == '\'' && prog[len(prog)-1] == '\'' {
		prog = strings.ReplaceAll(prog[1:len(prog)-1], `'\''`, "'")
	}
	prog = strings.Trim(prog, `'"`)
	return prog, filepath.Base(prog) == "loom"
}

func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// writeFile replaces path with b through a file beside it, so that the
// agent never reads half a settings file; it keeps the file's mode.
func writeFile(path string, b []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".loom-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	err = cmp.Or(err, tmp.Chmod(mode), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func shortPath(pl Places, p string) string {
	if h := pl.Home(); h != "" {
		if rel, err := filepath.Rel(h, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return p
}
