// Package mcp is loom mcp: the store's history served to other agents
// over the Model Context Protocol on standard input and output.
package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
	loommcp "github.com/loomhq/loom/mcp"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/semantic"
)

// Options are the options of `loom mcp`: the streams, the store (opened
// again on each call while it does not exist yet), the configuration
// (prices, handoff), the directories (memory files), the project the
// tools default to, and what handing a session off takes.
type Options struct {
	IO        *term.IOStreams
	ReadStore func(context.Context) (loom.Engine, error)
	Config    func() (*config.Config, string, error)
	// PriceTable prices the usage tool's reports.
	PriceTable func() (*pricing.Table, error)
	// MCPRedact is the secret detector of the read tools, nil when
	// their redaction is off.
	MCPRedact func() *secrets.Detector
	Dirs      func() (paths.Dirs, error)
	Project   func() (loom.Project, error)
	Getenv    func(string) string
	Home      func() string
	Formats   []importer.Format
	Version   string
	User      string
	// Searchers gives the searcher of a store (ranking by meaning where
	// an embeddings model is at hand); nil ranks by keywords.
	Searchers func(context.Context) func(loom.Reader) *semantic.Searcher
	// InTeam reports whether --team made the store a team's.
	InTeam func() bool
}

// NewCmdMCP builds loom mcp. runF, when not nil, is called with the
// options instead of running the command (for tests).
func NewCmdMCP(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO:         inv.IO,
		ReadStore:  inv.ReadStoreAgain,
		Config:     inv.Config,
		PriceTable: inv.PriceTable,
		MCPRedact:  command.ConfigLoader(inv.Config).MCPRedact,
		Dirs:       inv.Dirs,
		Project:    inv.Project,
		Getenv:     inv.Getenv,
		Home:       inv.Home,
		Formats:    inv.Formats,
		Version:    inv.Version,
		Searchers:  command.EmbeddingsOf(inv.Factory).Searchers,
		InTeam:     inv.InTeam,
	}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve your session history to other agents over MCP (stdin/stdout)",
		Long: `Serve the store over the Model Context Protocol on standard input and
output, so that any agent that takes MCP tools (Claude Code, Codex CLI,
Gemini CLI, opencode, loom itself) can search and read your whole
history, imported sessions included. An agent starts it; you register it
once with that agent.

Tools: search_sessions, list_sessions, read_session, recall (what past
sessions of the project say about a prompt, within a budget of tokens),
usage (tokens and cost over time), blame (which session wrote each line
of a file, and the conversation behind one; these six read only, blame
only here, never at loom serve's /mcp) and memory (read, or append to
MEMORY.md or USER.md). Sessions are those of
$LOOM_USER (or --user); search and list default to the project of the
directory the agent starts loom mcp in. No session is ever locked or
changed. loom serve offers the same tools at /mcp over HTTP.

The read tools replace secrets (API keys, tokens, passwords, private
keys) with [REDACTED:rule] markers, and each result says how many; set
redact = false under [mcp] in config.toml to turn that off for this
store. See docs/security.md.

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
			opts.User = inv.User()
			if runF != nil {
				return runF(opts)
			}
			return mcpRun(cmd.Context(), opts)
		},
	}
	inv.AddTeamFlag(cmd)
	return cmd
}

func mcpRun(ctx context.Context, opts *Options) error {
	user := opts.User
	d, err := opts.Dirs()
	if err != nil {
		return err
	}
	cfg := loommcp.Config{
		Store:      (&reopener{open: opts.ReadStore}).store,
		Files:      true,
		BlameCache: d.BlameCacheDir(),
		User:       user,
		Version:    opts.Version,
		Team:       opts.InTeam != nil && opts.InTeam(),
		Memory:     func(string) (string, string) { return d.MemoryFile(), d.UserFile() },
		Logger:     slog.New(slog.NewTextHandler(opts.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if opts.Searchers != nil {
		cfg.Searcher = opts.Searchers(ctx)
	}
	c, _, err := opts.Config()
	if err == nil && opts.PriceTable != nil {
		cfg.Prices, _ = opts.PriceTable()
	}
	if opts.MCPRedact != nil {
		cfg.Redact = opts.MCPRedact()
	}
	switch {
	case err != nil:
		// The history tools need no configuration: serve them, and say
		// why handoff is not offered.
		fmt.Fprintf(opts.IO.ErrOut, "loom mcp: %s; the handoff tool is off\n", loom.ErrorMessage(err))
	case c.MCP.Handoff:
		h := &loommcp.Handoff{Env: opts.Getenv, Home: opts.Home()}
		for _, fm := range opts.Formats {
			if w, ok := fm.(handoff.Writer); ok {
				h.Writers = append(h.Writers, w)
			}
		}
		cfg.Handoff = h
	}
	// Outside a readable directory there is no default project: the
	// tools look in every project.
	if p, err := opts.Project(); err == nil {
		cfg.Project = p
	}
	if opts.IO.IsStdinTTY() {
		fmt.Fprintf(opts.IO.ErrOut, "loom mcp speaks the Model Context Protocol on standard input and output: an agent starts it, e.g.\n  claude mcp add loom -- loom mcp\nSee docs/mcp.md. Ctrl+D ends it.\n")
	}
	return loommcp.Serve(ctx, cfg, io.NopCloser(opts.IO.In), nopWriteCloser{opts.IO.Out})
}

// reopener opens the store for loom mcp's tools on their first call, and
// again on a later one while the store did not exist yet: an agent that
// starts loom mcp before the first session finds it once there is one.
type reopener struct {
	mu   sync.Mutex
	open func(context.Context) (loom.Engine, error)
}

func (r *reopener) store(ctx context.Context) (loom.Engine, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.open(ctx)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
