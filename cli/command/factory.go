// Package command holds what loom's commands are built from: the Factory
// that gives them the streams, the store, the project, the clock and the
// configuration; the errors that decide exit codes; argument checks; and
// the output every command writes the same way (JSON, message rendering,
// ids as a terminal shows them). The command packages under cli import
// it; cli wires them into one tree.
package command

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/agent/mcpclient"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/mcp"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/semantic"
)

// Factory holds what commands need from the outside world. main builds
// the real one; tests build one on buffers and a temporary store.
type Factory struct {
	IO *term.IOStreams
	// Env looks up environment variables.
	Env func(string) string
	// Getwd returns the working directory, which decides the project.
	Getwd func() (string, error)
	// OpenStore opens the store a URL or path names, for what access
	// says the command will do with it. A store that does not exist
	// (with AccessRead or AccessWrite) is an ENOTFOUND error.
	OpenStore func(ctx context.Context, url string, access Access) (loom.Store, error)
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

	// onInterrupt, when set by a command, receives Ctrl+C instead of it
	// cancelling the command (chat cancels the running turn instead).
	onInterrupt atomic.Pointer[func()]
	// replayLogWarned: the user was told the replay log cannot be written.
	replayLogWarned sync.Once

	flags       globalFlags
	store       loom.Store
	storeAccess Access
	// mcp holds the connections to config.toml's MCP servers, made when
	// an agent first needs them and closed when the command ends.
	mcp *mcpclient.Clients
	// adopted holds the roots of the projects whose sessions under the
	// root's path id this command moved to the project (see adopt), and
	// imported the projects an import met that are still to do.
	adopted  map[string]bool
	imported []loom.Project
	// project is the working directory's project as found in projectWD
	// (Project reads the work tree's git config once per directory).
	project   *loom.Project
	projectWD string
}

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

// globalFlags are the flags every command accepts.
type globalFlags struct {
	db      string
	user    string
	json    bool
	noColor bool
}

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

// User returns the owner of the sessions: --user, else $LOOM_USER, else
// "local".
func (f *Factory) User() string {
	if f.flags.user != "" {
		return f.flags.user
	}
	if u := f.Getenv("LOOM_USER"); u != "" {
		return u
	}
	return "local"
}

// JSON reports whether --json was given.
func (f *Factory) JSON() bool { return f.flags.json }

// Dirs returns loom's directories.
func (f *Factory) Dirs() (paths.Dirs, error) { return paths.Resolve(f.Getenv) }

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

// DBURL returns the store location: --db, else $LOOM_DB, else the
// default SQLite file.
func (f *Factory) DBURL() (string, error) {
	d, err := f.Dirs()
	if err != nil {
		return "", err
	}
	return paths.DBURL(f.flags.db, f.Getenv, d), nil
}

// Store opens the store for a command that changes existing sessions;
// Main closes it.
func (f *Factory) Store(ctx context.Context) (loom.Store, error) {
	return f.open(ctx, AccessWrite)
}

// ReadStore opens the store for a command that only reads it.
func (f *Factory) ReadStore(ctx context.Context) (loom.Store, error) {
	return f.open(ctx, AccessRead)
}

// CreateStore opens the store for a command that may write its first
// session or token, creating it when missing.
func (f *Factory) CreateStore(ctx context.Context) (loom.Store, error) {
	return f.open(ctx, AccessCreate)
}

// open opens the store once per command. A missing store at the default
// location reads as an empty one, so that a fresh machine lists no
// sessions without creating anything; a missing store that --db or
// $LOOM_DB names is an error (exit 1), so that a typo never makes an
// empty store.
func (f *Factory) open(ctx context.Context, access Access) (loom.Store, error) {
	if f.store != nil {
		// Opened for reading, the store is opened again for writing.
		// Write and create are the same to a store that exists.
		_, empty := f.store.(*EmptyStore)
		if access <= f.storeAccess || (access == AccessCreate && f.storeAccess == AccessWrite && !empty) {
			return f.store, nil
		}
		if err := f.CloseStore(); err != nil {
			return nil, err
		}
	}
	url, err := f.DBURL()
	if err != nil {
		return nil, err
	}
	if f.OpenStore == nil {
		return nil, fmt.Errorf("no store engine is configured")
	}
	st, err := f.OpenStore(ctx, url, access)
	if loom.ErrorCode(err) == loom.ENOTFOUND {
		if f.flags.db != "" || f.Getenv("LOOM_DB") != "" {
			return nil, errors.New(loom.ErrorMessage(err))
		}
		st, err = &EmptyStore{url: url}, nil
	}
	if err != nil {
		return nil, err
	}
	if _, empty := st.(*EmptyStore); !empty && access >= AccessWrite {
		if c, _, err := f.Config(); err == nil && c.Secrets.RedactOnWrite {
			d, err := c.Secrets.Detector()
			if err != nil {
				st.Close()
				return nil, err
			}
			st = &secrets.Store{Store: st, Detector: d}
		}
	}
	f.store, f.storeAccess = st, access
	f.adoptHere(ctx, st)
	return st, nil
}

// Underlying returns the store st wraps (a secrets.Store redacting what
// is written), st itself when it wraps none: for what only the engine's
// store provides, such as tokens and sync.
func Underlying(st loom.Store) loom.Store {
	for {
		u, ok := st.(interface{ Unwrap() loom.Store })
		if !ok {
			return st
		}
		st = u.Unwrap()
	}
}

// CloseStore closes the store if a command opened it.
func (f *Factory) CloseStore() error {
	if f.store == nil {
		return nil
	}
	err := f.store.Close()
	f.store = nil
	return err
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

// Project returns the project of the working directory.
func (f *Factory) Project() (loom.Project, error) {
	wd, err := f.Cwd()
	if err != nil {
		return loom.Project{}, err
	}
	if f.project != nil && f.projectWD == wd {
		return *f.project, nil
	}
	p, err := paths.DetectProject(wd)
	if err == nil {
		f.project, f.projectWD = &p, wd
	}
	return p, err
}

// ScopeProject is the project that a command which searches or lists
// sessions keeps to: the working directory's, the same default as loom
// mcp's. Nil means every project: when all is set (-a), or where no
// project can be found (a working directory that is gone).
func (f *Factory) ScopeProject(all bool) *loom.Project {
	if all {
		return nil
	}
	p, err := f.Project()
	if err != nil {
		return nil
	}
	return &p
}

// StoreSession opens the store for a command that changes the session
// ref names, and finds it (see Resolve).
func (f *Factory) StoreSession(ctx context.Context, ref string) (loom.Store, *loom.Session, error) {
	return f.openSession(ctx, AccessWrite, ref)
}

// ReadSession opens the store for a command that only reads the session
// ref names, and finds it (see Resolve).
func (f *Factory) ReadSession(ctx context.Context, ref string) (loom.Store, *loom.Session, error) {
	return f.openSession(ctx, AccessRead, ref)
}

func (f *Factory) openSession(ctx context.Context, access Access, ref string) (loom.Store, *loom.Session, error) {
	st, err := f.open(ctx, access)
	if err != nil {
		return nil, nil, err
	}
	s, err := f.Resolve(ctx, st, ref)
	if err != nil {
		return nil, nil, err
	}
	return st, s, nil
}

// Resolve finds the live session ref names for this user, preferring this
// project's keys.
func (f *Factory) Resolve(ctx context.Context, st loom.Store, ref string) (*loom.Session, error) {
	return f.ResolveIn(ctx, st, ref, false)
}

func (f *Factory) ResolveIn(ctx context.Context, st loom.Store, ref string, deleted bool) (*loom.Session, error) {
	scope := loom.ResolveScope{UserID: f.User(), Deleted: deleted}
	// A directory outside any readable project still resolves ids and
	// titles; it only loses the preference for this project's keys.
	if p, err := f.Project(); err == nil {
		scope.ProjectID = p.ID
	}
	s, err := st.Resolve(ctx, ref, scope)
	if deleted || loom.ErrorCode(err) != loom.ENOTFOUND {
		return s, err
	}
	// Not among the live sessions: if it is in the trash, say so and how
	// to get it back, rather than that it does not exist.
	scope.Deleted = true
	if t, terr := st.Resolve(ctx, ref, scope); terr == nil && t.DeletedAt != nil {
		return nil, loom.Errorf(loom.ENOTFOUND, "session %s is in the trash since %s; loom session restore %s brings it back",
			SessionLabel(t), loom.FormatTime(*t.DeletedAt), t.ID)
	}
	return nil, suggest(ctx, st, f.User(), ref, err)
}

// suggest adds to err, that no session matches ref, the sessions whose
// title (or key, description, last prompt, newest messages) holds ref, as
// the picker finds them: a word of a title is not a reference, but the
// session is likely one of those.
func suggest(ctx context.Context, st loom.Store, user, ref string, err error) error {
	if len(ref) < 3 || strings.ContainsAny(ref, "\n\r") {
		return err
	}
	found, ferr := st.Sessions(ctx, loom.SessionFilter{UserID: user, Text: ref, Archived: loom.WithArchived, Limit: 20})
	if ferr != nil || len(found) == 0 {
		return err
	}
	// Titles that hold it first, as a word of a title is what was meant.
	lower := strings.ToLower(ref)
	slices.SortStableFunc(found, func(a, b *loom.Session) int {
		ia, ib := strings.Contains(strings.ToLower(a.Title), lower), strings.Contains(strings.ToLower(b.Title), lower)
		switch {
		case ia == ib:
			return 0
		case ia:
			return -1
		}
		return 1
	})
	var names []string
	for _, s := range found[:min(3, len(found))] {
		names = append(names, fmt.Sprintf("%s (%s)", SessionLabel(s), s.ID))
	}
	more := ""
	if len(found) > 3 {
		more = ", …"
	}
	return loom.Errorf(loom.ENOTFOUND, "no session matches %q; sessions that mention it: %s%s (give an id, or the whole title)",
		ref, strings.Join(names, ", "), more)
}

// RefLen is how much of ids a terminal shows: the shortest prefix, at
// least loom.ShortIDLen, that tells them apart among themselves and that
// resolves back to each among all of the user's sessions (loom.RefLen),
// so that an id loom prints can be typed back. Piped output shows whole
// ids and asks the store nothing.
func (f *Factory) RefLen(ctx context.Context, st loom.Store, ids []string) int {
	n := term.AbbrevLen(ids)
	if !f.IO.IsStdoutTTY() || len(ids) == 0 {
		return n
	}
	m, err := loom.RefLen(ctx, st, loom.ResolveScope{UserID: f.User()}, ids)
	if err != nil {
		slog.Debug("shortest unique id prefix", "err", err)
		return n
	}
	return max(n, m)
}

// DisplayID is id as a terminal shows it (see refLen), whole otherwise.
func (f *Factory) DisplayID(ctx context.Context, st loom.Store, id string) string {
	return term.AbbrevID(f.IO, id, f.RefLen(ctx, st, []string{id}))
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

// PriceTable is the bundled price table with config.toml's [prices].
func (f *Factory) PriceTable() (*pricing.Table, error) {
	c, _, err := f.Config()
	if err != nil {
		return nil, err
	}
	return c.PriceTable(), nil
}

// ServeConfig is what loom serve hands to the HTTP server that main
// wires in (Factory.Serve).
type ServeConfig struct {
	Store  loom.Store
	Tokens loom.TokenStore
	// Agent opens the conversations of POST /api/v1/messages.
	Agent  *agent.Service
	Logger *slog.Logger
	// Grace is how long running turns may take to finish on shutdown.
	Grace time.Duration
	// MCP configures the MCP tools served at /mcp.
	MCP mcp.Config
	// Searcher runs GET /api/v1/search: keyword search fused with search
	// by meaning where an embeddings endpoint is at hand.
	Searcher *semantic.Searcher
}

// AddGlobalFlags defines the flags every command accepts on fs.
func (f *Factory) AddGlobalFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.flags.db, "db", "", "store to use: a SQLite file, sqlite:PATH or postgres://… (default $LOOM_DB, else the data directory's sessions.db)")
	fs.StringVar(&f.flags.user, "user", "", "owner of the sessions (default $LOOM_USER, else local)")
	fs.BoolVar(&f.flags.json, "json", false, "print machine-readable JSON")
	fs.BoolVar(&f.flags.noColor, "no-color", false, "never colour the output (also NO_COLOR)")
}

// NoColor reports whether --no-color was given or NO_COLOR is set.
func (f *Factory) NoColor() bool { return f.flags.noColor || f.Getenv("NO_COLOR") != "" }

// UserFlag is --user as given: empty when it was not.
func (f *Factory) UserFlag() string { return f.flags.user }

// OnInterrupt makes h receive Ctrl+C instead of it cancelling the
// command (nil: Ctrl+C cancels again).
func (f *Factory) OnInterrupt(h func()) {
	if h == nil {
		f.onInterrupt.Store(nil)
		return
	}
	f.onInterrupt.Store(&h)
}

// Interrupt hands Ctrl+C to the handler a command set, and reports
// whether there was one.
func (f *Factory) Interrupt() bool {
	h := f.onInterrupt.Load()
	if h == nil {
		return false
	}
	(*h)()
	return true
}

// Close ends what the command opened: the connections to MCP servers
// and the store.
func (f *Factory) Close() error {
	if f.mcp != nil {
		f.mcp.Close()
	}
	return f.CloseStore()
}

// ReadStoreAgain opens the store for reading like ReadStore, and opens it
// again while it did not exist when last opened, for a command that runs
// long and should find the store once something creates it.
func (f *Factory) ReadStoreAgain(ctx context.Context) (loom.Store, error) {
	if _, empty := f.store.(*EmptyStore); empty {
		if err := f.CloseStore(); err != nil {
			return nil, err
		}
	}
	return f.ReadStore(ctx)
}

// Secrets returns the secret detector config.toml's [secrets] describes
// (the built-in rules when it sets none).
func (f *Factory) Secrets() (*secrets.Detector, *config.Config, error) {
	c, _, err := f.Config()
	if err != nil {
		return nil, nil, err
	}
	d, err := c.Secrets.Detector()
	return d, c, err
}

// MCPRedact is the secret detector of the MCP read tools: nil when
// config.toml's [mcp] redact is false; the built-in rules when
// config.toml cannot be read, so that secrets never leave by an error.
func (f *Factory) MCPRedact() *secrets.Detector {
	d, c, err := f.Secrets()
	switch {
	case err != nil:
		return secrets.Default()
	case !c.MCP.Redacts():
		return nil
	}
	return d
}
