// Package cli is loom's command line: the command tree, built from the
// command packages beside it, and the translation of errors into exit
// codes and one line on stderr. cmd/loom wires it to the real streams and
// store engines; tests drive it with buffers and a temporary store.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	blamecmd "github.com/loomhq/loom/cli/blame"
	capturecmd "github.com/loomhq/loom/cli/capture"
	"github.com/loomhq/loom/cli/chat"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/doctor"
	"github.com/loomhq/loom/cli/embed"
	"github.com/loomhq/loom/cli/hooks"
	mcpcmd "github.com/loomhq/loom/cli/mcp"
	recallcmd "github.com/loomhq/loom/cli/recall"
	"github.com/loomhq/loom/cli/search"
	secretscmd "github.com/loomhq/loom/cli/secrets"
	"github.com/loomhq/loom/cli/serve"
	"github.com/loomhq/loom/cli/session"
	sharecmd "github.com/loomhq/loom/cli/share"
	synccmd "github.com/loomhq/loom/cli/sync"
	teamcmd "github.com/loomhq/loom/cli/team"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/cli/token"
	"github.com/loomhq/loom/cli/usage"
)

// Main runs the loom command with args and returns the process's exit
// code. Every error is reported here, once, as one line on stderr.
func Main(f *command.Factory, args []string) (code int) {
	// A panic is a bug, but the user still gets one line and an exit
	// code, never a stack trace; the trace goes to a file for the report.
	defer func() {
		if v := recover(); v != nil {
			code = reportPanic(f, v, debug.Stack())
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inv := command.NewInvocation(f)
	// Ctrl+C cancels the command, unless the command takes it over (chat
	// cancels only the running turn). SIGTERM always cancels.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for sig := range sigs {
			if sig == os.Interrupt && inv.Interrupt() {
				continue
			}
			cancel()
		}
	}()
	args = inv.TeamValues(args)
	root := newRootCmd(inv, nil, commandNamed(args))
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if jerr := inv.FinishOutput(); err == nil && jerr != nil {
		err = jerr
	}
	if cerr := inv.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close the store: %w", cerr)
	}
	if err == nil {
		return command.ExitOK
	}
	err = inv.DamageHint(inv.TeamHint(err))
	printError(f.IO, err)
	return command.ExitCode(err)
}

// reportPanic tells the user about a panic in one line and writes its
// stack to a file in the state directory, naming the file.
func reportPanic(f *command.Factory, v any, stack []byte) int {
	msg := fmt.Sprintf("loom: internal error: %s", term.SanitizeLine(fmt.Sprint(v)))
	if path, err := writeCrashReport(f, v, stack); err == nil {
		msg += " (details in " + path + ")"
	} else {
		msg += " (no details: " + term.SanitizeLine(err.Error()) + ")"
	}
	fmt.Fprintln(f.IO.ErrOut, msg)
	return command.ExitError
}

// writeCrashReport writes what a bug report needs: the version, the
// platform, the panic and its stack (not the arguments, which may be
// private).
func writeCrashReport(f *command.Factory, v any, stack []byte) (string, error) {
	d, err := f.Dirs()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(d.State, "crashes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	now := time.Now().UTC()
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.txt", now.Format("20060102T150405Z"), os.Getpid()))
	report := fmt.Sprintf("loom %s (%s, %s/%s)\ntime: %s\npanic: %v\n\n%s", command.OrDash(f.Version), runtime.Version(),
		runtime.GOOS, runtime.GOARCH, now.Format(time.RFC3339), v, stack)
	if err := os.WriteFile(path, []byte(report), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// printError writes err as one line, and for an ambiguous reference the
// sessions it could mean, one per line, so the user can pick an id. An
// error may quote stored text (a title, a key, a line of a file), so
// what it says is escaped for the terminal (term.SanitizeLine).
func printError(ios *term.IOStreams, err error) {
	var se *command.SilentError
	if errors.As(err, &se) {
		return
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(ios.ErrOut, "loom: interrupted")
		return
	}
	var le *loom.Error
	if errors.As(err, &le) && le.Code == loom.EAMBIGUOUS && len(le.Candidates) > 0 {
		ref := strings.SplitN(le.Message, " matches ", 2)[0]
		fmt.Fprintf(ios.ErrOut, "loom: %s matches %d sessions; give an id or a longer prefix:\n", term.SanitizeLine(ref), len(le.Candidates))
		for _, s := range le.Candidates {
			project := s.Project.Name
			if s.Project.Root != "" {
				project = s.Project.Root
			}
			fields := []string{s.ID, command.OrDash(s.Title), command.OrDash(s.Key), command.OrDash(project)}
			for i, v := range fields {
				fields[i] = term.SanitizeLine(v)
			}
			fmt.Fprintf(ios.ErrOut, "  %s\tupdated %s\n", strings.Join(fields, "\t"), loom.FormatTime(s.UpdatedAt))
		}
		return
	}
	if errors.Is(err, agent.ErrNoProvider) {
		// A list to copy from, a line each.
		fmt.Fprintln(ios.ErrOut, "loom: "+term.Sanitize(loom.ErrorMessage(err)))
		return
	}
	msg := loom.ErrorMessage(err)
	if le == nil {
		msg = err.Error()
	}
	// One line for scripts; on a terminal, wrapped at words.
	fmt.Fprintln(ios.ErrOut, ios.WrapErr("loom: "+term.SanitizeLine(msg)))
}

// NewRootCmd builds the loom command tree for the run inv.
func NewRootCmd(inv *command.Invocation) *cobra.Command {
	return newRootCmd(inv, nil, "")
}

// newRootCmd builds the command tree; chatRunF, when not nil, is called
// with the options bare loom would chat with instead of chatting (for
// tests); only, when not "", is the one subcommand built.
func newRootCmd(inv *command.Invocation, chatRunF func(*chat.Options) error, only string) *cobra.Command {
	// Bare loom is loom chat, on options of its own filled from the
	// same flags.
	chatOpts := chat.NewOptions(inv)
	var showVersion bool
	root := &cobra.Command{
		Use:   "loom [command] [flags]",
		Short: "Durable, searchable, resumable sessions for AI agents",
		Long: `loom keeps every conversation an agent has as a session you can list,
search, resume, fork, move, export and import.`,
		Example: `  loom                      # chat in this project's current session
  loom run "summarise the README"
  loom session list
  loom search "flaky test"
  loom session show 0196a3b2
  loom session export 0196a3b2 -o session.jsonl`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          chat.Args(chatOpts),
		RunE: func(cmd *cobra.Command, args []string) error {
			if showVersion {
				return versionRun(&VersionOptions{IO: inv.IO, Version: inv.Version, Commit: inv.Commit, Date: inv.Date, JSON: inv.JSON()})
			}
			// loom alone is loom chat: the same options, run with the
			// root's own context.
			return chat.RunE(inv, cmd, chatOpts, args, chatRunF)
		},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if inv.NoColor() {
				inv.IO.SetColorEnabled(false)
			}
			return inv.StartOutput()
		},
	}
	root.SetIn(inv.IO.In)
	root.SetOut(inv.IO.Out)
	root.SetErr(inv.IO.ErrOut)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return command.UsageErrorf("%s (see '%s --help')", flagErrorText(err), cmd.CommandPath())
	})
	root.CompletionOptions.HiddenDefaultCmd = true
	command.UseFlagUsages(root)
	command.WrapHelp(root, inv.IO.TerminalWidth)

	inv.AddGlobalFlags(root.PersistentFlags())

	chat.AddFlags(root, chatOpts)
	root.Flags().BoolVar(&showVersion, "version", false, "print loom's version, as loom version does")
	for _, c := range subcommands {
		if only == "" || c.name == only {
			root.AddCommand(c.new(inv))
		}
	}
	if only != "" {
		command.Partial(root, func() *cobra.Command { return newRootCmd(inv, chatRunF, "") })
	}
	return root
}

// subcommands are loom's commands by name. TestSubcommandsNamed checks
// each name against its command's.
var subcommands = []struct {
	name string
	new  func(*command.Invocation) *cobra.Command
}{
	{"chat", func(inv *command.Invocation) *cobra.Command { return chat.NewCmdChat(inv, nil) }},
	{"run", func(inv *command.Invocation) *cobra.Command { return chat.NewCmdRun(inv, nil) }},
	{"session", session.NewCmdSession},
	{"search", func(inv *command.Invocation) *cobra.Command { return search.NewCmdSearch(inv, nil) }},
	{"blame", func(inv *command.Invocation) *cobra.Command { return blamecmd.NewCmdBlame(inv, nil) }},
	{"secrets", secretscmd.NewCmdSecrets},
	{"recall", func(inv *command.Invocation) *cobra.Command { return recallcmd.NewCmdRecall(inv, nil) }},
	{"hooks", func(inv *command.Invocation) *cobra.Command { return hooks.NewCmdHooks(inv, nil) }},
	{"capture", capturecmd.NewCmdCapture},
	{"doctor", func(inv *command.Invocation) *cobra.Command { return doctor.NewCmdDoctor(inv, nil) }},
	{"embed", func(inv *command.Invocation) *cobra.Command { return embed.NewCmdEmbed(inv, nil) }},
	{"replay", func(inv *command.Invocation) *cobra.Command { return newCmdReplay(inv, nil) }},
	{"usage", func(inv *command.Invocation) *cobra.Command { return usage.NewCmdUsage(inv, nil) }},
	{"log", newCmdLog},
	{"serve", func(inv *command.Invocation) *cobra.Command { return serve.NewCmdServe(inv, nil) }},
	{"mcp", func(inv *command.Invocation) *cobra.Command { return mcpcmd.NewCmdMCP(inv, nil) }},
	{"token", token.NewCmdToken},
	{"sync", func(inv *command.Invocation) *cobra.Command { return synccmd.NewCmdSync(inv, nil) }},
	{"share", func(inv *command.Invocation) *cobra.Command { return sharecmd.NewCmdShare(inv, nil) }},
	{"team", teamcmd.NewCmdTeam},
	{"paths", func(inv *command.Invocation) *cobra.Command { return newCmdPaths(inv, nil) }},
	{"version", func(inv *command.Invocation) *cobra.Command { return newCmdVersion(inv, nil) }},
}

// commandNamed is the subcommand args run when their first is its
// name exactly (not an alias, a flag or a prefix), "" otherwise: a
// process builds that command alone, not the whole tree (a twentieth
// of a short command's own work, loom blame of a file's), and the
// command it runs is the same.
func commandNamed(args []string) string {
	if len(args) == 0 {
		return ""
	}
	for _, c := range subcommands {
		if c.name == args[0] {
			return c.name
		}
	}
	return ""
}

// flagValueError matches pflag's message for a value that does not parse.
// It is compiled only when a flag fails.
var flagValueError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: (?:strconv\.Parse(\w+)|.*)`)
})

// flagErrorText rewrites pflag's parse errors, which quote Go's strconv
// internals, into words.
func flagErrorText(err error) string {
	m := flagValueError().FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	want := "a valid value"
	switch {
	case strings.HasPrefix(m[3], "Int"), strings.HasPrefix(m[3], "Uint"):
		want = "a whole number"
	case strings.HasPrefix(m[3], "Float"):
		want = "a number"
	case strings.HasPrefix(m[3], "Bool"):
		want = "true or false"
	}
	return fmt.Sprintf("invalid value %q for %s: want %s", m[1], m[2], want)
}
