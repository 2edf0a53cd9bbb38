package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/mcp"
)

// MCPOptions are the options of `loom mcp`.
type MCPOptions struct {
	f *command.Factory
}

func newCmdMCP(f *command.Factory) *cobra.Command {
	opts := &MCPOptions{f: f}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve your session history to other agents over MCP (stdin/stdout)",
		Long: `Serve the store over the Model Context Protocol on standard input and
output, so that any agent that takes MCP tools (Claude Code, Codex CLI,
Gemini CLI, opencode, loom itself) can search and read your whole
history, imported sessions included. An agent starts it; you register it
once with that agent.

Tools: search_sessions, list_sessions, read_session (read-only) and
memory (read, or append to MEMORY.md or USER.md). Sessions are those of
$LOOM_USER (or --user); search and list default to the project of the
directory the agent starts loom mcp in. No session is ever locked or
changed. loom serve offers the same tools at /mcp over HTTP.

See docs/mcp.md for each agent's registration.`,
		Example: `  claude mcp add loom -- loom mcp
  codex mcp add loom -- loom mcp
  gemini mcp add loom loom mcp
  # in loom's own config.toml:
  #   [mcp_servers.history]
  #   command = "loom"
  #   args = ["mcp"]`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return mcpRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func mcpRun(ctx context.Context, opts *MCPOptions) error {
	f := opts.f
	user := f.User()
	d, err := f.Dirs()
	if err != nil {
		return err
	}
	cfg := mcp.Config{
		Store:   (&reopener{f: f}).store,
		User:    user,
		Version: f.Version,
		Memory:  func(string) (string, string) { return d.MemoryFile(), d.UserFile() },
		Logger:  slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	c, _, err := f.Config()
	if err == nil {
		cfg.Prices = c.PriceTable()
	}
	switch {
	case err != nil:
		// The history tools need no configuration: serve them, and say
		// why handoff is not offered.
		fmt.Fprintf(f.IO.ErrOut, "loom mcp: %s; the handoff tool is off\n", loom.ErrorMessage(err))
	case c.MCP.Handoff:
		h := &mcp.Handoff{Env: f.Getenv, Home: f.Home()}
		for _, fm := range f.Formats {
			if w, ok := fm.(handoff.Writer); ok {
				h.Writers = append(h.Writers, w)
			}
		}
		cfg.Handoff = h
	}
	// Outside a readable directory there is no default project: the
	// tools look in every project.
	if p, err := f.Project(); err == nil {
		cfg.Project = p
	}
	if f.IO.IsStdinTTY() {
		fmt.Fprintf(f.IO.ErrOut, "loom mcp speaks the Model Context Protocol on standard input and output: an agent starts it, e.g.\n  claude mcp add loom -- loom mcp\nSee docs/mcp.md. Ctrl+D ends it.\n")
	}
	return mcp.Serve(ctx, cfg, io.NopCloser(f.IO.In), nopWriteCloser{f.IO.Out})
}

// reopener opens the store for loom mcp's tools on their first call, and
// again on a later one while the store did not exist yet: an agent that
// starts loom mcp before the first session finds it once there is one.
type reopener struct {
	mu sync.Mutex
	f  *command.Factory
}

func (r *reopener) store(ctx context.Context) (loom.Store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.f.ReadStoreAgain(ctx)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
