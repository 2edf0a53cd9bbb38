// Package recall is loom recall: what past sessions of this project say
// about a prompt, within a budget of tokens, for a person or, through
// an agent's hooks, for the agent itself.
package recall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
	"github.com/loomhq/loom/secrets"
)

// A hook's recall answers within its budget ([recall] hook_time in
// config.toml, LOOM_RECALL_HOOK_TIME; config.DefaultRecallHookTime),
// counted from its process's start: an agent waits for its hooks. It
// answers with what it found by hookAnswer of it (fewer or shorter
// turns on a busy machine), and gives nothing only when even that
// comes after the whole budget.
const hookAnswer = 85

// warmAnswer is the share of the budget by which a warm recall must
// have answered: what is left after it is the hook printing the answer.
const warmAnswer = 95

// maxHookInput bounds the JSON an agent passes its hook (the prompt).
const maxHookInput = 1 << 20

// hookAgents are the agents whose hooks take added context as JSON on
// stdout: Claude Code (SessionStart, UserPromptSubmit) and Gemini CLI
// (SessionStart, BeforeAgent).
var hookAgents = []string{"claude-code", "gemini"}

// Options are the options of `loom recall`.
type Options struct {
	IO *term.IOStreams
	// ReadStore opens the store to read.
	ReadStore func(context.Context) (loom.Engine, error)
	// ScopeProject is the project recalled from: nil for every project.
	ScopeProject func(all bool) *loom.Project
	// Cwd is the working directory, the project of a hook whose input
	// names none.
	Cwd func() (string, error)
	// HookTime is a hook's budget ([recall] hook_time,
	// LOOM_RECALL_HOOK_TIME).
	HookTime func() (time.Duration, error)
	// Started is when the process started, from which a hook's budget
	// counts.
	Started func() time.Time
	// Store is the URL of the store ReadStore opens, which a warm
	// recall must hold to answer a hook; nil asks none.
	Store func() (string, error)
	// Dirs are loom's directories, where the projects' recall settings
	// are kept.
	Dirs func() (paths.Dirs, error)
	// Warm reports whether a hook that finds no warm recall answering
	// starts one ([recall] warm, LOOM_RECALL_WARM).
	Warm func() bool
	// StartWarm starts a warm recall of store (loom recall serve) in
	// the background, for the hooks that follow; the hook does not wait
	// for it.
	StartWarm func(store string) error
	// Version is loom's: a warm recall of another version does not
	// answer.
	Version string
	// Redact is the detector of what recall hands an agent and its
	// model, printed or through a hook ([mcp] redact in config.toml);
	// nil redacts nothing.
	Redact func() *secrets.Detector
	// NoRedact prints what is recalled as stored (--no-redact).
	NoRedact bool
	User     string
	JSON     bool

	// Prompt is what to recall about; "-" reads it from IO.In.
	Prompt      string
	Tokens      int
	Hook        string
	AllProjects bool
}

// NewCmdRecall builds loom recall and its enable and disable. runF,
// when not nil, is called with the options instead of running the
// command (for tests).
func NewCmdRecall(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO:           inv.IO,
		ReadStore:    inv.ReadStore,
		ScopeProject: inv.Scope().ScopeProject,
		Cwd:          inv.Cwd,
		HookTime:     hookTime(command.ConfigLoader(inv.Config)),
		Started:      commandStart(processStart, time.Now()),
		Dirs:         inv.Dirs,
		Store:        inv.DBURL,
		Redact:       command.ConfigLoader(inv.Config).MCPRedact,
		Warm:         warmOn(command.ConfigLoader(inv.Config)),
		StartWarm:    startWarm,
		Version:      inv.Version,
	}
	cmd := &cobra.Command{
		Use:   "recall [PROMPT]",
		Short: "What past sessions of this project say about a prompt",
		Long: `Print the turns of this project's past sessions most relevant to PROMPT
(read from stdin when PROMPT is -), best first, each with its session id
and date, in at most --tokens tokens (1,500 by default): what an agent
should know before it answers. Without PROMPT, the project's latest
sessions by title. It searches as loom search does and calls no model.
-a recalls from every project. A reply that only says what it does next,
its match being in a tool call or the tool's output, is printed with
what matched after it.

With --hook AGENT it is an agent's hook: it reads the hook's JSON on
stdin and prints the context in the form the agent adds to the model's
request, for Claude Code's SessionStart and UserPromptSubmit and Gemini
CLI's SessionStart and BeforeAgent hooks. A hook does nothing unless
recall is enabled for the project (loom recall enable), and answers
within its budget ([recall] hook_time in config.toml or
LOOM_RECALL_HOOK_TIME, 100ms by default, from the process's start) with
what it found by then: on a busy machine fewer or shorter turns.

A recall that runs out of time says so: a line on stderr, and "partial":
true with --json.

What recall prints is meant for an agent and its model, so its secrets
are replaced with [REDACTED:rule] markers, as the MCP tools' are, before
any text is cut to fit; --no-redact (or [mcp] redact = false in
config.toml) prints them as stored.`,
		Example: `  loom recall "why does the pool time out"
  loom recall --tokens 500 --json "retry backoff"
  loom recall -a "how did we get the migration past SQLite"  # every project
  loom recall --team "flaky deploy"         # from your only team's projects
  loom recall enable                        # this project, for the hooks
  loom recall --hook claude-code            # as a Claude Code hook`,
		Args: command.ArgsBetween(0, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Tokens < 1 {
				return command.UsageErrorf("--tokens must be 1 or more")
			}
			opts.Prompt = strings.Join(args, " ")
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			if opts.Hook != "" {
				return hookRun(cmd.Context(), opts)
			}
			return recallRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Tokens, "tokens", recall.DefaultTokens, "most tokens to print")
	cmd.Flags().StringVar(&opts.Hook, "hook", "", "run as AGENT's hook (claude-code or gemini): hook JSON on stdin, context JSON on stdout")
	cmd.Flags().BoolVarP(&opts.AllProjects, "all-projects", "a", false, "recall from every project")
	cmd.Flags().BoolVar(&opts.NoRedact, "no-redact", false, "print secrets as stored")
	cmd.AddCommand(newCmdEnable(inv, true, nil), newCmdEnable(inv, false, nil), newCmdServe(inv, nil))
	inv.AddTeamFlag(cmd)
	return cmd
}

// EnableOptions are the options of `loom recall enable` and `disable`.
type EnableOptions struct {
	IO *term.IOStreams
	// Project is the working directory's project.
	Project func() (loom.Project, error)
	// Dirs are loom's directories, where the setting is kept.
	Dirs func() (paths.Dirs, error)

	// Enable is true for enable, false for disable.
	Enable bool
}

func newCmdEnable(inv *command.Invocation, enable bool, runF func(*EnableOptions) error) *cobra.Command {
	opts := &EnableOptions{IO: inv.IO, Project: inv.Project, Dirs: inv.Dirs, Enable: enable}
	use, short := "enable", "Let the agents' recall hooks add context in this project"
	if !enable {
		use, short = "disable", "Stop the agents' recall hooks in this project"
	}
	return &cobra.Command{
		Use: use, Short: short, Args: command.ArgsBetween(0, 0),
		Example: "  cd ~/src/api && loom recall " + use,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return enableRun(opts)
		},
	}
}

func enableRun(opts *EnableOptions) error {
	p, err := opts.Project()
	if err != nil {
		return err
	}
	if err := setEnabled(opts.Dirs, p, opts.Enable); err != nil {
		return err
	}
	state := "enabled"
	if !opts.Enable {
		state = "disabled"
	}
	fmt.Fprintf(opts.IO.Out, "Recall %s for project %s (%s).\n", state, p.Name, p.Root)
	return nil
}

func recallRun(ctx context.Context, opts *Options) error {
	prompt := opts.Prompt
	if prompt == "-" {
		b, err := io.ReadAll(io.LimitReader(opts.IO.In, maxHookInput))
		if err != nil {
			return fmt.Errorf("read the prompt: %w", err)
		}
		prompt = string(b)
	}
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return err
	}
	o := recall.Options{Prompt: prompt, UserID: opts.User, Tokens: opts.Tokens}
	p := opts.ScopeProject(opts.AllProjects)
	if p != nil {
		// Where this directory's project has no session, every
		// project's are recalled, and that is said.
		o.ProjectID, o.Everywhere = p.ID, true
	}
	if !opts.NoRedact && opts.Redact != nil {
		o.Redact = opts.Redact()
	}
	res, err := recall.Recall(ctx, st, o)
	if err != nil {
		return err
	}
	if res.Partial {
		// Also with --json, whose answer says "partial": true.
		fmt.Fprintln(opts.IO.ErrOut, PartialNote)
	}
	if res.Everywhere {
		// Also with --json, whose answer says "every_project": true.
		fmt.Fprintf(opts.IO.ErrOut, "loom recall: no session of yours is in %s (%s); recalled from every project.\n",
			term.SanitizeLine(p.Name), term.SanitizeLine(p.Root))
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, res)
	}
	if len(res.Turns) == 0 && !res.Partial {
		// Said on stderr, as loom search says it: stdout stays empty
		// for what reads it.
		fmt.Fprintln(opts.IO.ErrOut, nothingNote(prompt, res.Scope))
	}
	if res.Redacted > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "loom: redacted %s (--no-redact keeps them)\n", human.Plural(res.Redacted, "secret"))
	}
	_, err = io.WriteString(opts.IO.Out, res.Text())
	return err
}

// nothingNote is the line a recall that found nothing in scope prints.
func nothingNote(prompt, scope string) string {
	q := term.SanitizeLine(loom.Truncate(strings.TrimSpace(prompt), 60))
	switch {
	case q == "" && scope == recall.ScopeProject:
		return "loom recall: no past session of yours in this project; loom recall -a lists every project's."
	case q == "":
		return "loom recall: no past session of yours to list."
	case scope == recall.ScopeProject:
		return fmt.Sprintf("loom recall: nothing in this project's past sessions bears on %q; loom recall -a looks in every project.", q)
	}
	return fmt.Sprintf("loom recall: nothing in past sessions bears on %q.", q)
}

// hookInput is what Claude Code and Gemini CLI pass their hooks.
type hookInput struct {
	SessionID     string `json:"session_id"`
	Cwd           string `json:"cwd"`
	HookEventName string `json:"hook_event_name"`
	Prompt        string `json:"prompt"`
}

// hookOutput is the JSON both agents read from a hook that adds context.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// hookRun answers an agent's hook. It never fails the agent's prompt:
// whatever goes wrong, or comes after its budget, prints nothing
// and exits 0, after one line on stderr for a fault.
func hookRun(ctx context.Context, opts *Options) error {
	if !slices.Contains(hookAgents, opts.Hook) {
		return command.UsageErrorf("--hook %q: want %s", opts.Hook, strings.Join(hookAgents, " or "))
	}
	budget, err := opts.HookTime()
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "loom recall: %v\n", err)
		return nil
	}
	start := opts.Started()
	ctx, cancel := context.WithDeadline(ctx, start.Add(budget))
	defer cancel()
	var w warmth
	text, event, err := hookContext(ctx, opts, &w, start.Add(budget*hookAnswer/100), start.Add(budget*warmAnswer/100))
	// With the answer given (or not), a warm recall for the hooks that
	// follow, where none answered this one.
	defer w.start(opts)
	if err != nil {
		// Out of time is no fault: the agent goes on without context,
		// and loom doctor tells how often that happens.
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, loom.ErrSearchTime) {
			fmt.Fprintf(opts.IO.ErrOut, "loom recall: %v\n", err)
		} else {
			countHook(opts, false)
		}
		return nil
	}
	if late := time.Now().After(start.Add(budget)); text == "" || late {
		// Nothing, or too late: the agent has waited long enough.
		countHook(opts, !late)
		return nil
	}
	defer countHook(opts, true)
	var out hookOutput
	out.HookSpecificOutput.HookEventName = event
	out.HookSpecificOutput.AdditionalContext = text
	return json.NewEncoder(opts.IO.Out).Encode(out)
}

// staleStart is how long before its command was built a process may
// have started for its start to count as the command's. A hook's
// process builds its command at once (milliseconds, seconds on a
// loaded machine); a process that started long before its command (a
// test binary running one command after another, a program that
// embeds loom's commands) counts from the command's own start.
const staleStart = 10 * time.Second

// commandStart is when the command built at built started: its
// process's start (from processStart), unless that is stale.
func commandStart(processStart func() time.Time, built time.Time) func() time.Time {
	return func() time.Time {
		if p := processStart(); built.Sub(p) <= staleStart {
			return p
		}
		return built
	}
}

// countHook counts a hook that answered within its budget, or ran out
// of time, in the state directory (recall.CountHook), for loom doctor.
func countHook(opts *Options, answered bool) {
	if opts.Dirs == nil {
		return
	}
	if d, err := opts.Dirs(); err == nil && d.State != "" {
		recall.CountHook(d.State, answered)
	}
}

// warmth is what a hook found of the warm recall of its store: where
// it listens, and whether one is wanted there (recall is enabled for
// the hook's project, and none answered).
type warmth struct {
	store, sock string
	// input is the hook's input as it is read; decided is set once the
	// hook knew whether recall is enabled for its project (it may run
	// out of time before).
	input           <-chan hookRead
	decided, wanted bool
	// started is set once this hook started one.
	started bool
}

// hookRead is a hook's input, read and parsed.
type hookRead struct {
	in  hookInput
	err error
}

// warmInputWait bounds how long a hook that ran out of time before it
// knew its project waits for its input, to know whether to start a
// warm recall: an agent closes it at once.
const warmInputWait = time.Second

// start starts a warm recall where one is wanted, unless one holds the
// socket already (it is starting, or stopping) or the configuration
// says not to. A hook that ran out of time before it knew its project
// (on a busy machine, when a warm recall is wanted most) finds it now.
// A failure is logged, not reported: the hooks recall by themselves as
// before.
func (w *warmth) start(opts *Options) {
	if w.sock == "" || opts.StartWarm == nil || (opts.Warm != nil && !opts.Warm()) {
		return
	}
	if !w.decided {
		w.wanted = w.enabled(opts)
	}
	if !w.wanted || w.started || recall.Answering(w.sock) {
		return
	}
	w.started = true
	if err := opts.StartWarm(w.store); err != nil {
		slog.Debug("no warm recall started", "err", err)
	}
}

// enabled reports whether recall is enabled for the project of the
// hook's input, waiting for it at most warmInputWait.
func (w *warmth) enabled(opts *Options) bool {
	if w.input == nil {
		return false
	}
	var rd hookRead
	select {
	case rd = <-w.input:
	case <-time.After(warmInputWait):
		return false
	}
	if rd.err != nil {
		return false
	}
	p, err := hookProject(opts, rd.in)
	if err != nil {
		return false
	}
	on, err := enabled(opts.Dirs, p)
	return err == nil && on
}

// hookProject is the project of a hook's input: that of its cwd, else
// of the working directory.
func hookProject(opts *Options, in hookInput) (loom.Project, error) {
	cwd := in.Cwd
	if cwd == "" {
		var err error
		if cwd, err = opts.Cwd(); err != nil {
			return loom.Project{}, err
		}
	}
	return paths.DetectProject(cwd)
}

// readHookInput reads and parses a hook's input in the background; the
// channel gives it once.
func readHookInput(opts *Options) <-chan hookRead {
	c := make(chan hookRead, 1)
	go func() {
		var rd hookRead
		b, err := command.ReadHookInput(context.Background(), opts.IO.In, maxHookInput)
		switch {
		case err != nil:
			rd.err = err
		default:
			if err := json.Unmarshal(b, &rd.in); err != nil {
				rd.err = fmt.Errorf("the hook's input is not JSON: %w", err)
			}
		}
		c <- rd
	}()
	return c
}

// hookContext is the context a hook adds, and the event it answers; ""
// when recall is not enabled for the hook's project or found nothing.
func hookContext(ctx context.Context, opts *Options, w *warmth, answerBy, warmBy time.Time) (text, event string, err error) {
	// A warm recall (the capture service's, or one an earlier hook
	// started) answers without this process opening the store or
	// compiling the secret rules; where there is none, both start at
	// once, while the input is read and the project found.
	sock, store := "", ""
	if opts.Store != nil {
		if s, err := opts.Store(); err == nil {
			if d, err := opts.Dirs(); err == nil {
				w.store, w.sock = s, recall.WarmSocket(d.State, s)
				if _, err := os.Stat(w.sock); err == nil {
					sock, store = w.sock, s
				}
			}
		}
	}
	var local *localRecall
	if sock == "" {
		local = startLocal(ctx, opts)
	}
	input := readHookInput(opts)
	var rd hookRead
	select {
	case rd = <-input:
	case <-ctx.Done():
		// Out of time: the input is still read, to know whether to
		// start a warm recall.
		w.input = input
		return "", "", ctx.Err()
	}
	if rd.err != nil {
		return "", "", rd.err
	}
	in := rd.in
	p, err := hookProject(opts, in)
	if err != nil {
		return "", "", err
	}
	on, err := enabled(opts.Dirs, p)
	if err != nil || !on {
		w.decided = err == nil
		return "", "", err
	}
	// None answers unless asked below.
	w.decided, w.wanted = true, w.sock != ""
	event = in.HookEventName
	if event == "" {
		event = "UserPromptSubmit"
	}
	if sock == "" && event == "SessionStart" {
		// A session's first hook adds only the latest sessions'
		// titles, and a prompt's hook may follow at once (claude -p):
		// the warm recall starts now, not after this answer.
		w.start(opts)
	}
	if sock != "" {
		// The warm recall has the time the hook's own would spend
		// opening the store and printing: it answers by warmBy.
		actx, cancel := context.WithDeadline(ctx, warmBy)
		a, err := recall.Ask(actx, sock, recall.Question{Store: store, Prompt: in.Prompt, UserID: opts.User, ProjectID: p.ID,
			Tokens: opts.Tokens, Redact: opts.Redact != nil && !opts.NoRedact, Deadline: warmBy, Version: opts.Version})
		cancel()
		switch {
		case err == nil && a.Error != "":
			w.wanted = false
			return "", "", errors.New(a.Error)
		case err == nil:
			w.wanted = false
			return a.Text, event, nil
		case !errors.Is(err, recall.ErrNotAnswering) && !errors.Is(err, recall.ErrOtherStore):
			// It was asked and did not answer in time: a recall
			// of this process's own would come later still.
			w.wanted = false
			return "", "", context.DeadlineExceeded
		}
		slog.Debug("warm recall did not answer; recalling here", "socket", sock, "err", err)
		local = startLocal(ctx, opts)
	}
	st, redact, err := local.wait(ctx)
	if err != nil {
		return "", "", err
	}
	res, err := recall.Recall(ctx, st, recall.Options{Prompt: in.Prompt, UserID: opts.User, ProjectID: p.ID, Tokens: opts.Tokens,
		Redact: redact, Deadline: answerBy})
	if err != nil {
		return "", "", err
	}
	return res.Text(), event, nil
}

// localRecall is what a hook's own recall needs, made in the
// background: the store opened, the secret rules compiled.
type localRecall struct {
	stc     chan openedStore
	redactc chan *secrets.Detector
}

type openedStore struct {
	st  loom.Engine
	err error
}

func startLocal(ctx context.Context, opts *Options) *localRecall {
	l := &localRecall{stc: make(chan openedStore, 1), redactc: make(chan *secrets.Detector, 1)}
	go func() {
		st, err := opts.ReadStore(ctx)
		l.stc <- openedStore{st, err}
	}()
	// What a hook adds goes to the agent's model: redacted as the MCP
	// tools' results are ([mcp] redact in config.toml).
	go func() {
		var redact *secrets.Detector
		if opts.Redact != nil && !opts.NoRedact {
			redact = opts.Redact()
		}
		l.redactc <- redact
	}()
	return l
}

// wait waits for the store and the detector, until ctx is done.
func (l *localRecall) wait(ctx context.Context) (loom.Engine, *secrets.Detector, error) {
	var o openedStore
	select {
	case o = <-l.stc:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if o.err != nil {
		return nil, nil, o.err
	}
	select {
	case redact := <-l.redactc:
		return o.st, redact, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// marker is the file whose presence enables recall hooks for project p.
func marker(dirsOf func() (paths.Dirs, error), p loom.Project) (string, error) {
	dirs, err := dirsOf()
	if err != nil {
		return "", err
	}
	return filepath.Join(dirs.Data, "recall", p.ID), nil
}

func enabled(dirs func() (paths.Dirs, error), p loom.Project) (bool, error) {
	m, err := marker(dirs, p)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(m)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func setEnabled(dirs func() (paths.Dirs, error), p loom.Project, on bool) error {
	m, err := marker(dirs, p)
	if err != nil {
		return err
	}
	if !on {
		if err := os.Remove(m); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("disable recall: %w", err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(m), 0o700); err != nil {
		return fmt.Errorf("enable recall: %w", err)
	}
	if err := os.WriteFile(m, []byte(p.Root+"\n"), 0o600); err != nil {
		return fmt.Errorf("enable recall: %w", err)
	}
	return nil
}

// PartialNote is the line a recall that ran out of time prints.
const PartialNote = "loom recall: ran out of time (a busy machine, or common words): these are the best turns found before it did, not all; try again for the rest."

// warmOn is [recall] warm as load reads it: true unless it says false
// (a configuration that cannot be read starts none).
func warmOn(load command.ConfigLoader) func() bool {
	return func() bool {
		c, _, err := load()
		return err == nil && c.Recall.WarmOn()
	}
}

// hookTime is a hook's budget as load reads it.
func hookTime(load command.ConfigLoader) func() (time.Duration, error) {
	return func() (time.Duration, error) {
		c, _, err := load()
		if err != nil {
			return 0, err
		}
		if c.Recall.HookTime > 0 {
			return c.Recall.HookTime, nil
		}
		return config.DefaultRecallHookTime, nil
	}
}
