// Package chat is loom's conversation commands: chat, the interactive
// (or scripted) conversation, and run, one prompt and its reply; the
// printer of a running turn; and the choices both make on a terminal
// (a session in the picker, a turn from a list), which session resume
// and the session commands share.
package chat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/doctor"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/paths"
)

// Options are the options of `loom chat`.
type Options struct {
	Conversing
	// Project is the working directory's project: the picker starts
	// with its sessions, and /search keeps to it.
	Project func() (loom.Project, error)
	// Dirs says where the input history is kept.
	Dirs func() (paths.Dirs, error)
	// OnInterrupt hands Ctrl+C to a handler (nil: back to cancelling
	// the command).
	OnInterrupt func(func())
	// RefLen is how much of ids a terminal shows.
	RefLen func(ctx context.Context, st loom.Store, ids []string) int
	Now    func() time.Time
	User   string
	// Warning is a line to show on a terminal's first screen when it
	// matters (sessions another agent will soon delete that loom does
	// not hold); "" when nothing is to be said.
	Warning func(ctx context.Context) string

	Choice       command.SessionChoice
	Agent        agent.Choice
	FullHistory  bool
	NoHistory    bool
	ShowThinking bool
	NoResumeHint bool
}

// warningBudget is how long the first screen waits for the check behind
// its warning (doctor.Warner), once in ten minutes.
const warningBudget = 300 * time.Millisecond

// NewOptions returns chat's options filled from f; User is filled when
// the command runs.
func NewOptions(inv *command.Invocation) *Options {
	return &Options{
		Conversing:  newConversing(inv),
		Project:     inv.Project,
		Dirs:        inv.Dirs,
		OnInterrupt: inv.OnInterrupt,
		RefLen:      inv.Scope().RefLen,
		Now:         inv.TimeNow,
		Warning: func(ctx context.Context) string {
			return doctor.NewWarner(inv).Line(ctx, warningBudget)
		},
	}
}

// NewCmdChat builds loom chat. runF, when not nil, is called with the
// options instead of running the command (for tests). The root command
// takes chat's flags too (AddFlags, Args, RunE), on options of its own,
// so that "loom --new" is "loom chat --new".
func NewCmdChat(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := NewOptions(inv)
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk with the agent (the default command)",
		Long: `Talk with the agent in this project's current session.

Without flags, chat resumes the most recently active command-line session
of this project (the git top-level directory, or this directory outside
git) and says so; --new starts a fresh one, -c continues the most recent
one, -r REF resumes any session (id, prefix, key or title), and -r alone
on a terminal lets you choose it in the session picker; --key KEY the
session with that key. The last 10 messages are shown on resume.

When stdin is not a terminal, each line is one message (slash commands
too), and replies are printed as they stream, so chat can be scripted.

Slash commands: /new, /rename TITLE, /fork [TURN], /rewind [TURN],
/usage, /profile NAME, /history [N], /search [-a] QUERY, /compact,
/help, /exit.`,
		Example: `  loom chat
  loom chat --new
  loom chat --name "retry backoff"
  loom chat -r "flaky test"
  printf 'hello\n/usage\n' | loom chat --new`,
		Args: Args(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunE(inv, cmd, opts, args, runF)
		},
	}
	AddFlags(cmd, opts)
	return cmd
}

// Args accepts the REF of "-r REF": -r may be given alone (the
// picker), so the flag parser leaves what follows it as an argument.
func Args(opts *Options) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if opts.Choice.Resume == command.PickRef && len(args) <= 1 {
			return nil
		}
		return command.NoArgs(cmd, args)
	}
}

// RunE checks chat's flags and runs it, or, when runF is not nil, calls
// runF with the options instead. The root command calls it too (bare
// loom is loom chat), with its own cmd and so its own context.
func RunE(inv *command.Invocation, cmd *cobra.Command, opts *Options, args []string, runF func(*Options) error) error {
	opts.User = inv.User()
	if opts.Choice.Resume == command.PickRef && len(args) == 1 {
		opts.Choice.Resume = args[0]
	}
	if opts.Choice.Resume == command.PickRef && !opts.IO.CanPrompt() {
		return command.UsageErrorf("-r needs a session REF when not on a terminal")
	}
	if n := countTrue(opts.Choice.New, opts.Choice.Continue, opts.Choice.Resume != "", opts.Choice.Key != ""); n > 1 {
		return command.UsageErrorf("use only one of --new, --continue, --resume and --key")
	}
	if opts.FullHistory && opts.NoHistory {
		return command.UsageErrorf("use only one of --full-history and --no-history")
	}
	if err := opts.Choice.Check(); err != nil {
		return err
	}
	if runF != nil {
		return runF(opts)
	}
	return Chat(cmd.Context(), opts)
}

// AddFlags adds chat's flags to cmd: chat's own, and the root's, which
// runs chat.
func AddFlags(cmd *cobra.Command, opts *Options) {
	fl := cmd.Flags()
	fl.BoolVar(&opts.Choice.New, "new", false, "start a new session")
	fl.BoolVarP(&opts.Choice.Continue, "continue", "c", false, "resume this project's most recent session")
	fl.StringVarP(&opts.Choice.Resume, "resume", "r", "", "resume the session `REF` (id, prefix, key or title); alone, choose it in a picker")
	fl.Lookup("resume").NoOptDefVal = command.PickRef
	fl.StringVar(&opts.Choice.Key, "key", "", "use the session with this `KEY`, creating it if missing")
	fl.StringVarP(&opts.Choice.Name, "name", "n", "", "start a new session titled `TITLE`")
	fl.StringVar(&opts.Agent.Profile, "profile", "", "profile (system prompt) to use")
	fl.StringVar(&opts.Agent.Model, "model", "", "model to use")
	fl.BoolVar(&opts.FullHistory, "full-history", false, "show every message on resume")
	fl.BoolVar(&opts.NoHistory, "no-history", false, "show no messages on resume")
	fl.BoolVar(&opts.ShowThinking, "show-thinking", false, "show reasoning")
	fl.BoolVar(&opts.NoResumeHint, "no-resume-hint", false, "do not print how to resume on exit")
}

// chat is one interactive conversation on a terminal or a pipe.
type chat struct {
	opts *Options
	st   loom.Store
	conv *agent.Conversation
	// announced: "session <id>" was printed for the current session.
	announced bool

	mu     sync.Mutex
	cancel context.CancelFunc // cancels the running turn
}

// Chat runs the conversation opts chooses: on a terminal, interactive;
// else a message per line of stdin.
func Chat(ctx context.Context, opts *Options) error {
	st, err := opts.CreateStore(ctx)
	if err != nil {
		return err
	}
	if opts.Choice.Resume == command.PickRef {
		s, err := PickSession(ctx, opts.IO, st, opts.User, opts.Project, opts.Now)
		if err != nil {
			return err
		}
		opts.Choice.Resume = s.ID
	}
	conv, err := opts.OpenConversation(ctx, st, opts.Choice, opts.Agent, true)
	if err != nil {
		return err
	}
	c := &chat{opts: opts, st: st, conv: conv, announced: conv.Resumed()}
	defer c.detach(ctx)
	if conv.Resumed() {
		if err := c.resumed(ctx); err != nil {
			return err
		}
	} else if opts.IO.CanPrompt() {
		c.welcome()
	}
	if opts.IO.CanPrompt() && opts.Warning != nil {
		if w := opts.Warning(ctx); w != "" {
			cs := opts.IO.ColorScheme()
			fmt.Fprintln(opts.IO.ErrOut, cs.Yellow(opts.IO.WrapErr("loom: "+w)))
		}
	}
	// Ctrl+C cancels the running turn, not the program.
	handler := func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.cancel != nil {
			c.cancel()
		}
	}
	opts.OnInterrupt(handler)
	defer opts.OnInterrupt(nil)
	// Ctrl+C during a turn is not to leave "^C" in the reply.
	defer opts.IO.QuietInterrupt()()
	if opts.IO.CanPrompt() {
		return c.interactive(ctx)
	}
	return c.scripted(ctx)
}

func (c *chat) showHistory(ctx context.Context, limit int) error {
	msgs, err := c.conv.Messages(ctx, loom.MessageQuery{Limit: limit})
	if err != nil {
		return err
	}
	r := command.NewMessageRenderer(c.opts.IO, c.opts.Now(), c.opts.ShowThinking)
	for _, m := range msgs {
		if err := r.Render(c.opts.IO.ErrOut, m); err != nil {
			return err
		}
	}
	return nil
}

// detach closes the conversation and prints how to resume.
func (c *chat) detach(ctx context.Context) {
	c.conv.Close(ctx)
	// A fork of an imported session that no message made is not there
	// to resume.
	if s := c.conv.Session(); s.MessageCount > 0 && !c.conv.Pending() && !c.opts.NoResumeHint {
		c.opts.IO.ResumeHint("loom chat --resume " + s.ID)
	}
}

// interactive reads messages on a terminal: wrapped, of one line or
// several, with history.
func (c *chat) interactive(ctx context.Context) error {
	d, _ := c.opts.Dirs()
	hist := readHistory(d.HistoryFile())
	defer func() { writeHistory(d.HistoryFile(), hist) }()
	cs := c.opts.IO.ColorScheme()
	for {
		line, err := term.ReadInput(ctx, c.opts.IO, "› ", hist)
		if errors.Is(err, term.ErrInputAborted) {
			fmt.Fprintln(c.opts.IO.ErrOut, cs.Gray("(Ctrl+D or /exit to quit)"))
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(hist) == 0 || hist[len(hist)-1] != line {
			hist = append(hist, line)
		}
		// Keys typed while the reply streams are not echoed into it;
		// they wait for the next prompt.
		release := c.opts.IO.HoldTypeAhead()
		quit, err := c.handle(ctx, line)
		release()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintln(c.opts.IO.ErrOut, c.opts.IO.WrapErr(cs.Red("error: ")+term.SanitizeLine(loom.ErrorMessage(err))))
		}
		if quit {
			return nil
		}
	}
}

// scripted reads one message per line from stdin.
func (c *chat) scripted(ctx context.Context) error {
	sc := bufio.NewScanner(c.opts.IO.In)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var last error
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		quit, err := c.handle(ctx, line)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// Report and go on with the next line; the exit code still
			// says something failed.
			fmt.Fprintln(c.opts.IO.ErrOut, "loom: "+term.SanitizeLine(loom.ErrorMessage(err)))
			last = err
		}
		if quit {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if last != nil {
		return &command.SilentError{Code: command.ExitCode(last)}
	}
	return nil
}

// handle runs one input line: a slash command or a turn.
func (c *chat) handle(ctx context.Context, line string) (quit bool, err error) {
	if strings.HasPrefix(line, "/") {
		return c.slash(ctx, line)
	}
	return false, c.turn(ctx, line)
}

func (c *chat) turn(ctx context.Context, text string) error {
	tctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cancel = nil
		c.mu.Unlock()
		cancel()
	}()
	p := newTurnPrinter(c.opts.IO, c.opts.ShowThinking)
	p.begin()
	_, err := c.conv.Turn(tctx, text, p.event)
	p.end()
	if s := c.conv.Session(); !c.announced && s.MessageCount > 0 {
		fmt.Fprintf(c.opts.IO.ErrOut, "session %s\n", s.ID)
		c.announced = true
	}
	if err != nil && agent.IsCancelled(err) && ctx.Err() == nil {
		fmt.Fprintln(c.opts.IO.ErrOut, c.opts.IO.ColorScheme().Gray(interruptedTurn))
		return nil
	}
	return err
}

// interruptedTurn is what chat and run say when Ctrl+C stops a turn.
const interruptedTurn = "(interrupted: the reply was not kept; your message was)"
