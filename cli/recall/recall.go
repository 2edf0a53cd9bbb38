// Package recall is loom recall: what past sessions of this project say
// about a prompt, within a budget of tokens, for a person or, through
// an agent's hooks, for the agent itself.
package recall

import (
	"context"
	"fmt"
	"io"
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

A recall that runs out of time, or whose search ranked part of the
matches (words in very many messages), says so: a line on stderr, a
last line in what it prints (also in a hook's context), and "partial":
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

// PartialNote is the line a recall that ran out of time, or ranked part
// of its matches, prints.
const PartialNote = "loom recall: the search ranked part of the matches (a busy machine, or words in very many messages): these are the best turns of those, not necessarily of all; try again, or add rarer words."

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
