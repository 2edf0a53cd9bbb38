// Package command holds what loom's commands are built from: the Factory
// of what main wires in (the streams, the environment, the store engines,
// the clock, the configuration) and the Invocation, one run of the
// command line on it (its flags, the store it opened, the project); the
// errors that decide exit codes; argument checks; and
// the output every command writes the same way (JSON, message rendering,
// ids as a terminal shows them). The command packages under cli import
// it; cli wires them into one tree.
package command

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/mcp"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/semantic"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/syncrun"
	"github.com/loomhq/loom/teamrun"
)

// Factory is what main wires in from the outside world: the streams,
// the environment, the working directory, the store engines, the clock,
// the model providers, the server and the session formats. It holds
// nothing else and never changes: what one run of the command line opens
// and remembers (its global flags, the store, the MCP connections) is
// its Invocation's. main builds the real one; tests build one on buffers
// and a temporary store.
type Factory struct {
	IO *term.IOStreams
	// Env looks up environment variables.
	Env func(string) string
	// Getwd returns the working directory, which decides the project.
	Getwd func() (string, error)
	// OpenStore opens the store a URL or path names, for what access
	// says the command will do with it. A store that does not exist
	// (with AccessRead or AccessWrite) is an ENOTFOUND error. Options
	// set how the store writes: with [secrets] redact_on_write, the
	// invocation passes sessionstore.Redacting, which the engine's
	// store applies to every write. The store comes with the services
	// its engine provides (loom.Engine), which commands take from it.
	OpenStore func(ctx context.Context, url string, access Access, opts ...sessionstore.Option) (loom.Engine, error)
	// OpenReplica opens the store a URL or path names as OpenStore does
	// with AccessCreate, and returns with it the store as the replica
	// loom sync keeps in step with a hub: nil for an engine that keeps
	// no sync log of its own (PostgreSQL, a store its users' machines
	// share already). The wiring that knows the engine says so, and the
	// compiler holds the replica to syncrun.Store.
	OpenReplica func(ctx context.Context, url string, opts ...sessionstore.Option) (loom.Engine, syncrun.Store, error)
	// StoreFile returns the file a store URL names when its engine
	// keeps the store in one (SQLite), and "" for a server's store: a
	// command that stays running tells by it when the store became
	// another file (moved, made again). Nil: none is known.
	StoreFile func(url string) string
	// Now returns the current time, for ages shown to the user.
	Now func() time.Time
	// Version, Commit and Date are what a release build stamps into the
	// binary (make release); empty ones are read from the build's VCS
	// information when it has any.
	Version, Commit, Date string
	// Providers makes model providers by name ("openai", "anthropic").
	Providers map[string]agent.ProviderFunc
	// Serve runs loom's HTTP server on ln until ctx ends; main wires in
	// the server package (nil: loom serve is not available).
	Serve func(ctx context.Context, ln net.Listener, cfg ServeConfig) error
	// Formats are the other agents' session formats that
	// `loom session import --from` reads; main wires in their readers.
	Formats []importer.Format
	// LocalModelURL is where to look for a local OpenAI-compatible server
	// when no provider is configured (default: Ollama's address).
	LocalModelURL string
	// Damage says whether an error is the store's engine finding its
	// file damaged, or not a store at all, so that the error says what
	// to do next (nil: never).
	Damage func(error) Damage
}

// Damage is what an engine's error says of its store's file.
type Damage int

const (
	// Undamaged: the error is not about the file's state.
	Undamaged Damage = iota
	// Damaged: a page of the file does not read as the engine wrote it.
	Damaged
	// NotAStore: the file does not start as a store of the engine.
	NotAStore
)

// Access is what a command does with the store, which decides how the
// store is opened and whether a missing one is created.
type Access int

const (
	// AccessRead is for commands that only read (list, show, search,
	// export, usage, replay). They never create a file, and change one
	// only to bring it up to date, as any command that opens it does
	// (its schema; sessions of the working directory's project still
	// under its path id, see adoptProject): a store that cannot be
	// written is opened read-only.
	AccessRead Access = iota
	// AccessWrite is for commands that change sessions that must
	// already exist (delete, rename, fork, …): the store must exist and
	// be writable.
	AccessWrite
	// AccessCreate is for commands that may put the first session or
	// token into a store (chat, run, session import, serve, token): a
	// missing store is created, with its directory.
	AccessCreate
)

// Getenv looks up an environment variable, tolerating a nil Env.
func (f *Factory) Getenv(name string) string {
	if f.Env == nil {
		return os.Getenv(name)
	}
	return f.Env(name)
}

// TimeNow returns the current time from Now, else the clock.
func (f *Factory) TimeNow() time.Time {
	if f.Now == nil {
		return time.Now()
	}
	return f.Now()
}

// Dirs returns loom's directories.
func (f *Factory) Dirs() (paths.Dirs, error) { return paths.Resolve(f.Getenv) }

// BlameCache is the directory of loom blame's line-age cache, "" (no
// cache) where loom's directories cannot be placed.
func (f *Factory) BlameCache() string {
	d, err := f.Dirs()
	if err != nil {
		return ""
	}
	return d.BlameCacheDir()
}

// Config reads loom's configuration, config.toml with the environment's
// overrides, and returns the path of the file. Every command, and the
// agents they build, read it here.
func (f *Factory) Config() (*config.Config, string, error) {
	d, err := f.Dirs()
	if err != nil {
		return nil, "", err
	}
	c, err := config.Load(d.ConfigFile(), f.Getenv)
	return c, d.ConfigFile(), err
}

// Cwd returns the absolute working directory.
func (f *Factory) Cwd() (string, error) {
	getwd := f.Getwd
	if getwd == nil {
		getwd = os.Getwd
	}
	wd, err := getwd()
	if err != nil {
		return "", fmt.Errorf("find the working directory: %w", err)
	}
	return filepath.Abs(wd)
}

// AbsPath makes dir absolute against the working directory; empty is the
// working directory itself.
func (f *Factory) AbsPath(dir string) (string, error) {
	if dir != "" && filepath.IsAbs(dir) {
		return filepath.Clean(dir), nil
	}
	wd, err := f.Cwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, dir), nil
}

// Home is the user's home directory: $HOME as the command sees it, else
// the system's idea of it; the tools' own locations are under it.
func (f *Factory) Home() string {
	if h := f.Getenv("HOME"); h != "" {
		return h
	}
	home, _ := os.UserHomeDir()
	return home
}

// ServeConfig is what loom serve hands to the HTTP server that main
// wires in (Factory.Serve).
type ServeConfig struct {
	Store  loom.Engine
	Tokens loom.TokenStore
	// Agent opens the conversations of POST /api/v1/messages.
	Agent  *agent.Service
	Logger *slog.Logger
	// Grace is how long running turns may take to finish on shutdown.
	Grace time.Duration
	// MCP configures the MCP tools served at /mcp.
	MCP mcp.Config
	// Owner is the user loom serve runs as, whose the machine's files
	// are: the blame page and GET /api/v1/blame, which read them, are
	// offered to Owner alone.
	Owner string
	// BlameCache is the directory of the line-age cache of the blame
	// page and GET /api/v1/blame, "" for none.
	BlameCache string
	// Searcher runs GET /api/v1/search: keyword search fused with search
	// by meaning where an embeddings endpoint is at hand.
	Searcher *semantic.Searcher
	// Team is the team whose store Store is (loom serve --team), nil
	// for one's own.
	Team *teamrun.State
	// HubKey seals the checkpoints of teams' chains the hub keeps in
	// Store (server.Config.HubKey), nil for none.
	HubKey []byte
}

// ConfigLoader reads loom's configuration and names its file
// (Factory.Config); what commands derive from the configuration alone
// is its methods.
type ConfigLoader func() (*config.Config, string, error)

// PriceTable is the bundled price table with config.toml's [prices].
func (load ConfigLoader) PriceTable() (*pricing.Table, error) {
	c, _, err := load()
	if err != nil {
		return nil, err
	}
	return c.PriceTable(), nil
}

// Secrets returns the secret detector config.toml's [secrets] describes
// (the built-in rules when it sets none).
func (load ConfigLoader) Secrets() (*secrets.Detector, *config.Config, error) {
	c, _, err := load()
	if err != nil {
		return nil, nil, err
	}
	d, err := c.Secrets.Detector()
	return d, c, err
}

// Detector is the secret detector of Secrets alone, for the options of
// commands that redact.
func (load ConfigLoader) Detector() (*secrets.Detector, error) {
	d, _, err := load.Secrets()
	return d, err
}

// MCPRedact is the secret detector of the MCP read tools: nil when
// config.toml's [mcp] redact is false; the built-in rules when
// config.toml cannot be read, so that secrets never leave by an error.
func (load ConfigLoader) MCPRedact() *secrets.Detector {
	d, c, err := load.Secrets()
	switch {
	case err != nil:
		return secrets.Default()
	case !c.MCP.Redacts():
		return nil
	}
	return d
}
