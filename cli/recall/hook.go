package recall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
	"github.com/loomhq/loom/secrets"
)

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
