package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/cli/token"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/mcp"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/semantic"
	"github.com/loomhq/loom/teamrun"
)

// defaultServeAddr is where loom serve listens unless told otherwise:
// this machine only.
const defaultServeAddr = "127.0.0.1:7878"

// Options are the options of `loom serve`.
type Options struct {
	IO *term.IOStreams
	// CreateStore opens the store, creating it if missing.
	CreateStore func(context.Context) (loom.Engine, error)
	// AgentSetup builds the agent of server turns from the configuration.
	AgentSetup func() (*agent.Setup, error)
	// Serve runs the HTTP server (see command.Factory.Serve); nil in a
	// loom built without it.
	Serve func(ctx context.Context, ln net.Listener, cfg command.ServeConfig) error
	// DBURL is the store's URL, shown with any password hidden.
	DBURL func() (string, error)
	// Dirs says where the served token and the memory files are kept.
	Dirs func() (paths.Dirs, error)
	// PriceTable prices the usage the MCP tools report.
	PriceTable func() (*pricing.Table, error)
	// MCPRedact is the secret detector of the MCP read tools; nil when
	// config.toml turns their redaction off ([mcp] redact = false).
	MCPRedact func() *secrets.Detector
	Now       func() time.Time
	Version   string
	// User is the user served and given the token made at start.
	User string

	Addr  string
	Grace time.Duration
	// TokenTTL is the lifetime of a token made at start; zero for none.
	TokenTTL time.Duration
	// LogJSON writes the access log as JSON lines instead of text.
	LogJSON bool
	// Listening, when set by a test, receives the listener's address.
	Listening func(addr string)
	// Embeddings finds the embeddings endpoint that ranks search by
	// meaning (nil, or a nil client: keywords only).
	Embeddings func(context.Context) (*embedding.Client, string)
	// EmbedInterval is how often the store is looked at for messages to
	// embed (default 10s).
	EmbedInterval time.Duration
	// StartSummaries summarises quiet sessions in the background where
	// config.toml's [summaries] enabled is true (nil: never).
	StartSummaries func(ctx context.Context, st loom.Store, log *slog.Logger)
	// Team is the team --team serves the store of (nil: one's own).
	Team func() *teamrun.State
}

// NewOptions returns serve's options filled from f; User is filled when
// the command runs.
func NewOptions(inv *command.Invocation) *Options {
	return &Options{
		IO:          inv.IO,
		CreateStore: inv.CreateStore,
		AgentSetup:  inv.AgentSetup,
		Serve:       inv.Serve,
		DBURL:       inv.DBURL,
		Dirs:        inv.Dirs,
		PriceTable:  inv.PriceTable,
		MCPRedact:   command.ConfigLoader(inv.Config).MCPRedact,
		Now:         inv.TimeNow,
		Version:     inv.Version,
		Embeddings:  command.EmbeddingsOf(inv.Factory).Client,
		Team:        inv.Team,

		StartSummaries: func(ctx context.Context, st loom.Store, log *slog.Logger) {
			command.StartSummaries(ctx, inv, st, log)
		},
	}
}

// NewCmdServe builds loom serve. runF, when not nil, is called with the
// options instead of running the command (for tests).
func NewCmdServe(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := NewOptions(inv)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API and the web dashboard",
		Long: `Serve loom's JSON API under /api/v1 and a web dashboard at /, over the
same store as the command line.

On start it prints the dashboard's address with an access token of the
current user (--user, $LOOM_USER, else local); open that address to log
in. The token is the one printed at the last start, kept in the state
directory (serve-token-USER, mode 0600), while the store still accepts
it; otherwise a new one is made and kept there. With --token-ttl a new
token expires after that long, and a kept one is reused only if it
expires no later. Every API call needs a token:
Authorization: Bearer TOKEN. Each token is one user's, and a user sees
only their own sessions. 'loom token create --user NAME' makes tokens
for other users; 'loom token revoke ID' ends one.

POST /api/v1/messages runs agent turns with the provider configured for
the command line (config.toml or the environment); with none configured
it answers 503 and everything else works.

The default address serves this machine only. To serve a network, put a
TLS-terminating reverse proxy in front (tokens are bearer secrets).
Ctrl+C stops the server: running turns get --grace to finish, then are
cut at a whole-message boundary.

With --team NAME the store served is the team's on this machine (its
members' shared sessions, loom team sync): the dashboard adds a team
page (/team: the members, their sessions and usage) and its usage page
is by member.`,
		Example: `  loom serve
  loom serve --addr 0.0.0.0:8080 --log-json
  loom serve --token-ttl 7d
  loom serve --team core
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:7878/api/v1/sessions`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
				return command.UsageErrorf("--addr %q is not HOST:PORT", opts.Addr)
			}
			if opts.Grace < 0 {
				return command.UsageErrorf("--grace must not be negative")
			}
			var err error
			if opts.TokenTTL, err = token.TTLFlag(cmd); err != nil {
				return err
			}
			opts.User = inv.User()
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", defaultServeAddr, "address to listen on, `HOST:PORT`")
	cmd.Flags().DurationVar(&opts.Grace, "grace", 30*time.Second, "how long running turns may take to finish on shutdown")
	cmd.Flags().BoolVar(&opts.LogJSON, "log-json", false, "write the access log as JSON lines")
	token.AddTTLFlag(cmd, "a token made at start expires after `DURATION` (30d, 12h, 2w; default never)")
	inv.AddTeamFlag(cmd)
	return cmd
}

// Run serves the API and dashboard until ctx ends.
func Run(ctx context.Context, opts *Options) error {
	st, err := opts.CreateStore(ctx)
	if err != nil {
		return err
	}
	tokens := st.Optional().Tokens
	if tokens == nil {
		return fmt.Errorf("this store keeps no access tokens, so it cannot be served")
	}
	key, err := hubKey(opts, st)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	user := opts.User
	served, err := serveToken(ctx, opts, tokens, user, opts.TokenTTL)
	if err != nil {
		ln.Close()
		return err
	}

	var h slog.Handler = slog.NewTextHandler(opts.IO.ErrOut, nil)
	if opts.LogJSON {
		h = slog.NewJSONHandler(opts.IO.ErrOut, nil)
	}
	su, err := opts.AgentSetup()
	if err != nil {
		ln.Close()
		return err
	}
	// Server turns use the command line's configuration, under the
	// token's user, without what a network-facing agent must not have.
	su.Served, su.Operator = true, user
	if opts.Serve == nil {
		ln.Close()
		return fmt.Errorf("this loom is built without its HTTP server")
	}

	addr := ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
	fmt.Fprintf(opts.IO.Out, "loom serve: %s/?token=%s\n", base, served.secret)
	fmt.Fprintf(opts.IO.ErrOut, "Serving the API and dashboard on %s for user %s (store %s). Ctrl+C stops.\n", base, user, command.RedactURL(mustDBURL(opts)))
	fmt.Fprintln(opts.IO.ErrOut, servedTokenNote(served))
	if !addr.IP.IsLoopback() {
		fmt.Fprintln(opts.IO.ErrOut, "loom: warning: listening beyond this machine over plain HTTP; put a TLS reverse proxy in front, tokens are bearer secrets")
	}
	if _, err := su.Build(ctx, st, &loom.Session{UserID: user}, agent.Choice{}); err != nil {
		// The set-up help keeps its lines: squashed onto one, its #
		// comments would swallow the commands after them if pasted.
		fmt.Fprintf(opts.IO.ErrOut, "loom: POST /api/v1/messages answers 503 until a model provider is configured: %s\n", term.Sanitize(loom.ErrorMessage(err)))
	}
	if opts.Listening != nil {
		opts.Listening(ln.Addr().String())
	}
	logger := slog.New(h)
	searcher := startEmbedding(ctx, opts, st, logger)
	if opts.StartSummaries != nil {
		opts.StartSummaries(ctx, st, logger)
	}
	blameCache := ""
	if d, err := opts.Dirs(); err == nil {
		blameCache = d.BlameCacheDir()
	}
	mcpCfg := serveMCP(opts, user)
	mcpCfg.Team = opts.Team != nil && opts.Team() != nil
	// The tools read the store through a secrets gate: they search
	// through it too, ranking by the served index of vectors.
	mcpCfg.Searcher = searcher.Through
	var team *teamrun.State
	if opts.Team != nil {
		team = opts.Team()
	}
	return opts.Serve(ctx, ln, command.ServeConfig{
		Store:      st,
		Tokens:     tokens,
		Agent:      &agent.Service{Store: st, Build: su.Build, Now: opts.Now},
		Logger:     logger,
		Grace:      opts.Grace,
		MCP:        mcpCfg,
		Searcher:   searcher,
		Owner:      user,
		BlameCache: blameCache,
		Team:       team,
		HubKey:     key,
	})
}

// startEmbedding returns the searcher of the served store, and, where an
// embeddings endpoint is at hand, embeds the store's messages in the
// background for as long as ctx lasts, each batch added to the
// searcher's index as it is stored. Embedding never holds up a request
// or a turn: it only lags behind them.
func startEmbedding(ctx context.Context, opts *Options, st loom.Engine, log *slog.Logger) *semantic.Searcher {
	searcher := &semantic.Searcher{Store: st}
	if opts.Embeddings == nil {
		return searcher
	}
	client, _ := opts.Embeddings(ctx)
	vs := st.Optional().Vectors
	if client == nil || vs == nil {
		return searcher
	}
	searcher.Client = client
	e := &semantic.Embedder{Store: vs, Client: client, OnStored: searcher.Add}
	interval := opts.EmbedInterval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	fmt.Fprintf(opts.IO.ErrOut, "Ranking search by meaning too: messages are embedded in the background with %s.\n", term.SanitizeLine(client.Model()))
	var last string
	go e.Watch(ctx, interval, func(err error) {
		// Said once until it changes: an endpoint that is down fails
		// every interval.
		if msg := err.Error(); msg != last && !errors.Is(err, semantic.ErrBusy) {
			last = msg
			log.Warn("embedding", "error", msg)
		}
	})
	return searcher
}

func mustDBURL(opts *Options) string {
	u, err := opts.DBURL()
	if err != nil {
		return "?"
	}
	return u
}

// serveMCP configures the MCP tools of /mcp: every token's user reads
// their own sessions over the served store, in every project (a remote
// client has no working directory here), and only the operator has the
// memory files, which are this machine's.
func serveMCP(opts *Options, operator string) mcp.Config {
	cfg := mcp.Config{Version: opts.Version}
	cfg.Prices, _ = opts.PriceTable()
	if opts.MCPRedact != nil {
		cfg.Redact = opts.MCPRedact()
	}
	if d, err := opts.Dirs(); err == nil {
		cfg.Memory = func(user string) (string, string) {
			if user != operator {
				return "", ""
			}
			return d.MemoryFile(), d.UserFile()
		}
	}
	return cfg
}
