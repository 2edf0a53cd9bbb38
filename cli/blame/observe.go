package blame

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/shell"
	"github.com/loomhq/loom/observe"
)

// observeInput is what Claude Code's PreToolUse, PostToolUse and
// PostToolUseFailure (a command that failed may have changed files too)
// hooks, and Gemini CLI's BeforeTool and AfterTool, pass on stdin.
type observeInput struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	// ToolUseID is Claude Code's id of the call; Gemini CLI names none,
	// and its call is known by its input.
	ToolUseID string `json:"tool_use_id"`
}

// maxObserveInput bounds the JSON an observing hook reads: the input of
// one tool call, and after it the call's output.
const maxObserveInput = 16 << 20

// newCmdObserve builds loom blame observe: the hook, run before and after
// each of an agent's shell calls, that records what the call changed.
func newCmdObserve(inv *command.Invocation) *cobra.Command {
	var agent string
	cmd := &cobra.Command{
		Use:   "observe --hook AGENT",
		Short: "Record what an agent's shell call changed (run by its hooks around the call)",
		Long: `Run by the hooks loom hooks install writes around an agent's shell
calls (Claude Code's PreToolUse, PostToolUse and PostToolUseFailure on
Bash, Gemini CLI's BeforeTool and AfterTool on run_shell_command), with
the hook's JSON on stdin. Before the call it keeps a snapshot of the work tree (sizes and
times, and the text of the files changed since git's index was
written); after it, it records the files whose text the call changed,
with the lines it changed. loom blame credits those lines to the call's
session, where the command line alone cannot tell what it wrote.`,
		Example: `  loom blame observe --hook claude-code < pre-tool-use.json
  loom blame observe --hook gemini < after-tool.json`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return observeRun(cmd.Context(), inv, agent)
		},
	}
	cmd.Flags().StringVar(&agent, "hook", "", "the agent whose hook runs it: claude-code or gemini")
	return cmd
}

func observeRun(ctx context.Context, inv *command.Invocation, agent string) error {
	if agent != "claude-code" && agent != "gemini" {
		return command.UsageErrorf("--hook %q: want claude-code or gemini", agent)
	}
	raw, err := command.ReadHookInput(ctx, inv.IO.In, maxObserveInput)
	if err != nil {
		return err
	}
	var in observeInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Errorf("the hook's input is not %s hook JSON: %w", agent, err)
	}
	if in.SessionID == "" || !filepath.IsAbs(in.Cwd) {
		return fmt.Errorf("the hook's input names no session or no absolute cwd")
	}
	d, err := inv.Dirs()
	if err != nil {
		return err
	}
	dir := observe.Dir(d.Data)
	key := agent + ":" + in.SessionID
	call := in.ToolUseID
	if call == "" {
		sum := sha256.Sum256(append([]byte(in.ToolName+"\x00"), in.ToolInput...))
		call = "input:" + hex.EncodeToString(sum[:12])
	}
	switch in.HookEventName {
	case "PreToolUse", "BeforeTool":
		if err := observe.Before(ctx, dir, key, call, in.Cwd); err != nil {
			return fmt.Errorf("observe the shell call: %w", err)
		}
	case "PostToolUse", "PostToolUseFailure", "AfterTool":
		cmdline, _ := shell.Command(loom.Part{Type: loom.PartTool, Name: in.ToolName, Input: in.ToolInput})
		r := observe.Record{Key: key, Call: call, Tool: in.ToolName, At: inv.TimeNow().UTC().Truncate(time.Millisecond), Command: cmdline}
		if err := observe.After(ctx, dir, r); err != nil {
			return fmt.Errorf("observe the shell call: %w", err)
		}
	default:
		return fmt.Errorf("the hook's event %q is not one around a tool call", in.HookEventName)
	}
	return nil
}
