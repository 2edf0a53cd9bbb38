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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
)

// HookTime bounds a hook's recall, the store's opening included: an
// agent waits for its hooks, so a recall that takes longer gives
// nothing rather than delay the prompt.
const HookTime = 100 * time.Millisecond

// maxHookInput bounds the JSON an agent passes its hook (the prompt).
const maxHookInput = 1 << 20

// hookAgents are the agents whose hooks take added context as JSON on
// stdout: Claude Code (SessionStart, UserPromptSubmit) and Gemini CLI
// (SessionStart, BeforeAgent).
var hookAgents = []string{"claude-code", "gemini"}

type options struct {
	inv    *command.Invocation
	tokens int
	hook   string
	all    bool
}

// NewCmdRecall builds loom recall and its enable and disable.
func NewCmdRecall(inv *command.Invocation) *cobra.Command {
	opts := &options{inv: inv}
	cmd := &cobra.Command{
		Use:   "recall [PROMPT]",
		Short: "What past sessions of this project say about a prompt",
		Long: `Print the turns of this project's past sessions most relevant to PROMPT
(read from stdin when PROMPT is -), best first, each with its session id
and date, in at most --tokens tokens (1,500 by default): what an agent
should know before it answers. Without PROMPT, the project's latest
sessions by title. It searches as loom search does and calls no model.

With --hook AGENT it is an agent's hook: it reads the hook's JSON on
stdin and prints the context in the form the agent adds to the model's
request, for Claude Code's SessionStart and UserPromptSubmit and Gemini
CLI's SessionStart and BeforeAgent hooks. A hook does nothing unless
recall is enabled for the project (loom recall enable), and gives
nothing rather than take more than 100 ms.`,
		Example: `  loom recall "why does the pool time out"
  loom recall --tokens 500 --json "retry backoff"
  loom recall enable                        # this project, for the hooks
  loom recall --hook claude-code            # as a Claude Code hook`,
		Args: command.ArgsBetween(0, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.tokens < 1 {
				return command.UsageErrorf("--tokens must be 1 or more")
			}
			if opts.hook != "" {
				return runHook(cmd.Context(), opts)
			}
			prompt := strings.Join(args, " ")
			if prompt == "-" {
				b, err := io.ReadAll(io.LimitReader(inv.IO.In, maxHookInput))
				if err != nil {
					return fmt.Errorf("read the prompt: %w", err)
				}
				prompt = string(b)
			}
			return run(cmd.Context(), opts, prompt)
		},
	}
	cmd.Flags().IntVar(&opts.tokens, "tokens", recall.DefaultTokens, "most tokens to print")
	cmd.Flags().StringVar(&opts.hook, "hook", "", "run as AGENT's hook (claude-code or gemini): hook JSON on stdin, context JSON on stdout")
	cmd.Flags().BoolVarP(&opts.all, "all-projects", "a", false, "recall from every project")
	for _, enable := range []bool{true, false} {
		use, short := "enable", "Let the agents' recall hooks add context in this project"
		if !enable {
			use, short = "disable", "Stop the agents' recall hooks in this project"
		}
		cmd.AddCommand(&cobra.Command{
			Use: use, Short: short, Args: command.ArgsBetween(0, 0),
			Example: "  cd ~/src/api && loom recall " + use,
			RunE: func(cmd *cobra.Command, args []string) error {
				p, err := inv.Project()
				if err != nil {
					return err
				}
				if err := setEnabled(inv, p, enable); err != nil {
					return err
				}
				state := "enabled"
				if !enable {
					state = "disabled"
				}
				fmt.Fprintf(inv.IO.Out, "Recall %s for project %s (%s).\n", state, p.Name, p.Root)
				return nil
			},
		})
	}
	return cmd
}

func run(ctx context.Context, opts *options, prompt string) error {
	inv := opts.inv
	st, err := inv.ReadStore(ctx)
	if err != nil {
		return err
	}
	o := recall.Options{Prompt: prompt, UserID: inv.User(), Tokens: opts.tokens}
	if p := inv.Scope().ScopeProject(opts.all); p != nil {
		o.ProjectID = p.ID
	}
	res, err := recall.Recall(ctx, st, o)
	if err != nil {
		return err
	}
	if inv.JSON() {
		return command.WriteJSON(inv.IO.Out, res)
	}
	_, err = io.WriteString(inv.IO.Out, res.Text())
	return err
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

// runHook answers an agent's hook. It never fails the agent's prompt:
// whatever goes wrong, or takes longer than HookTime, prints nothing
// and exits 0, after one line on stderr for a fault.
func runHook(ctx context.Context, opts *options) error {
	inv := opts.inv
	if !slices.Contains(hookAgents, opts.hook) {
		return command.UsageErrorf("--hook %q: want %s", opts.hook, strings.Join(hookAgents, " or "))
	}
	limit := HookTime
	// LOOM_RECALL_HOOK_TIME sets another bound (a Go duration): for a
	// slow machine, and for tests, which cannot depend on a clock.
	if v := inv.Getenv("LOOM_RECALL_HOOK_TIME"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return command.UsageErrorf("LOOM_RECALL_HOOK_TIME=%q: want a duration such as 100ms", v)
		}
		limit = d
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	text, event, err := hookContext(ctx, opts)
	if err != nil {
		if !errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintf(inv.IO.ErrOut, "loom recall: %v\n", err)
		}
		return nil
	}
	if text == "" {
		return nil
	}
	var out hookOutput
	out.HookSpecificOutput.HookEventName = event
	out.HookSpecificOutput.AdditionalContext = text
	return json.NewEncoder(inv.IO.Out).Encode(out)
}

// hookContext is the context a hook adds, and the event it answers; ""
// when recall is not enabled for the hook's project or found nothing.
func hookContext(ctx context.Context, opts *options) (text, event string, err error) {
	inv := opts.inv
	b, err := command.ReadHookInput(ctx, inv.IO.In, maxHookInput)
	if err != nil {
		return "", "", err
	}
	var in hookInput
	if err := json.Unmarshal(b, &in); err != nil {
		return "", "", fmt.Errorf("the hook's input is not JSON: %w", err)
	}
	cwd := in.Cwd
	if cwd == "" {
		if cwd, err = inv.Cwd(); err != nil {
			return "", "", err
		}
	}
	p, err := paths.DetectProject(cwd)
	if err != nil {
		return "", "", err
	}
	if on, err := enabled(inv, p); err != nil || !on {
		return "", "", err
	}
	st, err := inv.ReadStore(ctx)
	if err != nil {
		return "", "", err
	}
	// What a hook adds goes to the agent's model: redacted as the MCP
	// tools' results are ([mcp] redact in config.toml).
	res, err := recall.Recall(ctx, st, recall.Options{Prompt: in.Prompt, UserID: inv.User(), ProjectID: p.ID, Tokens: opts.tokens,
		Redact: command.ConfigLoader(inv.Config).MCPRedact()})
	if err != nil {
		return "", "", err
	}
	event = in.HookEventName
	if event == "" {
		event = "UserPromptSubmit"
	}
	return res.Text(), event, nil
}

// marker is the file whose presence enables recall hooks for project p.
func marker(inv *command.Invocation, p loom.Project) (string, error) {
	dirs, err := inv.Dirs()
	if err != nil {
		return "", err
	}
	return filepath.Join(dirs.Data, "recall", p.ID), nil
}

func enabled(inv *command.Invocation, p loom.Project) (bool, error) {
	m, err := marker(inv, p)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(m)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func setEnabled(inv *command.Invocation, p loom.Project, on bool) error {
	m, err := marker(inv, p)
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
