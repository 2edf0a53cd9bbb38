package command

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/spf13/pflag"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent/mcpclient"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/syncrun"
	"github.com/loomhq/loom/teamrun"
)

// Invocation is one run of the command line, on the Factory main wired
// in: the global flags as given, and what the run opens and remembers
// until it ends. Main makes one per run, hands it to the command tree
// and closes it when the command returns; a command reaches the Factory
// through it.
type Invocation struct {
	*Factory

	flags globalFlags

	// store is the store the command opened, for the access it asked
	// for (see open); Close closes it.
	store       loom.Engine
	storeAccess Access
	// storeMissing: the store is an EmptyStore, standing for one that
	// does not exist yet.
	storeMissing bool
	// opened: a store was opened in this run (DamageHint).
	opened bool
	// project is the working directory's project as found in projectWD
	// (Project reads the work tree's git config once per directory).
	project   *loom.Project
	projectWD string
	// adopted holds the roots of the projects whose sessions under the
	// root's path id this run moved to the project (see adopt), and
	// imported the projects an import met that are still to do.
	adopted  map[string]bool
	imported []loom.Project
	// mcp holds the connections to config.toml's MCP servers, made when
	// an agent first needs them and closed when the command ends.
	mcp *mcpclient.Clients
	// replayLogWarned: the user was told the replay log cannot be written.
	replayLogWarned sync.Once
	// onInterrupt, when set by a command, receives Ctrl+C instead of it
	// cancelling the command (chat cancels the running turn instead).
	onInterrupt atomic.Pointer[func()]
	// jq filters standard output when --jq was given (startJQ).
	jq *jqFilter
	// team is the team whose store --team made the run's store.
	team      string
	teamState *teamrun.State
	// teamWord is the word after a --team given alone that names no
	// team of this machine (TeamValues), for TeamHint.
	teamWord string
	// teamStores are the teams' stores opened besides the run's store
	// (TeamStores); Close closes them.
	teamStores []loom.Engine
}

// NewInvocation starts a run of the command line on f.
func NewInvocation(f *Factory) *Invocation { return &Invocation{Factory: f} }

// globalFlags are the flags every command accepts.
type globalFlags struct {
	db      string
	user    string
	json    bool
	jq      string
	noColor bool
}

// AddGlobalFlags defines the flags every command accepts on fs.
func (inv *Invocation) AddGlobalFlags(fs *pflag.FlagSet) {
	fs.StringVar(&inv.flags.db, "db", "", "store to use: a SQLite file, sqlite:PATH or postgres://… (default $LOOM_DB, else the data directory's sessions.db)")
	fs.StringVar(&inv.flags.user, "user", "", "owner of the sessions (default $LOOM_USER, else local)")
	fs.BoolVar(&inv.flags.json, "json", false, "print machine-readable JSON")
	fs.StringVar(&inv.flags.jq, "jq", "", "filter the JSON output with a jq expression (implies --json)")
	fs.BoolVar(&inv.flags.noColor, "no-color", false, "never colour the output (also NO_COLOR)")
}

// User returns the owner of the sessions: --user, else $LOOM_USER, else
// "local".
func (inv *Invocation) User() string {
	if inv.flags.user != "" {
		return inv.flags.user
	}
	if u := inv.Getenv("LOOM_USER"); u != "" {
		return u
	}
	return "local"
}

// UserFlag is --user as given: empty when it was not.
func (inv *Invocation) UserFlag() string { return inv.flags.user }

// DBFlag is --db as given, "" without it.
func (inv *Invocation) DBFlag() string { return inv.flags.db }

// JSON reports whether --json was given.
func (inv *Invocation) JSON() bool { return inv.flags.json || inv.flags.jq != "" }

// StartOutput puts what the global flags ask for between the command
// and standard output: the --jq filter. Main calls FinishOutput when the
// command ends.
func (inv *Invocation) StartOutput() error {
	if inv.flags.jq == "" {
		return nil
	}
	return inv.startJQ(inv.flags.jq)
}

// NoColor reports whether --no-color was given or NO_COLOR is set.
func (inv *Invocation) NoColor() bool { return inv.flags.noColor || inv.Getenv("NO_COLOR") != "" }

// DBURL returns the store location: --db, else $LOOM_DB, else the
// default SQLite file.
func (inv *Invocation) DBURL() (string, error) {
	d, err := inv.Dirs()
	if err != nil {
		return "", err
	}
	return paths.DBURL(inv.flags.db, inv.Getenv, d), nil
}

// Store opens the store for a command that changes existing sessions;
// Main closes it.
func (inv *Invocation) Store(ctx context.Context) (loom.Engine, error) {
	return inv.open(ctx, AccessWrite)
}

// ReadStore opens the store for a command that only reads it.
func (inv *Invocation) ReadStore(ctx context.Context) (loom.Engine, error) {
	return inv.open(ctx, AccessRead)
}

// CreateStore opens the store for a command that may write its first
// session or token, creating it when missing.
func (inv *Invocation) CreateStore(ctx context.Context) (loom.Engine, error) {
	return inv.open(ctx, AccessCreate)
}

// CreateReplica opens the store as CreateStore does, for loom sync: the
// store, and the replica of it that sync runs on (Factory.OpenReplica),
// nil for a store whose engine keeps no sync log of its own. A store
// the run opened before is opened again, so that both are one handle.
func (inv *Invocation) CreateReplica(ctx context.Context) (loom.Engine, syncrun.Store, error) {
	if inv.OpenReplica == nil {
		return nil, nil, fmt.Errorf("no store engine is configured")
	}
	if err := inv.closeStore(); err != nil {
		return nil, nil, err
	}
	var rep syncrun.Store
	st, err := inv.openWith(ctx, AccessCreate, func(ctx context.Context, url string, _ Access, opts ...sessionstore.Option) (loom.Engine, error) {
		st, r, err := inv.OpenReplica(ctx, url, opts...)
		rep = r
		return st, err
	})
	if err != nil {
		return nil, nil, err
	}
	return st, rep, nil
}

// ReadStoreAgain opens the store for reading like ReadStore, and opens it
// again while it did not exist when last opened, for a command that runs
// long and should find the store once something creates it.
func (inv *Invocation) ReadStoreAgain(ctx context.Context) (loom.Engine, error) {
	if inv.store != nil && inv.storeMissing {
		if err := inv.closeStore(); err != nil {
			return nil, err
		}
	}
	return inv.ReadStore(ctx)
}

// StoreSession opens the store for a command that changes the session
// ref names, and finds it (see Scope.Resolve).
func (inv *Invocation) StoreSession(ctx context.Context, ref string) (loom.Engine, *loom.Session, error) {
	return inv.openSession(ctx, AccessWrite, ref)
}

// ReadSession opens the store for a command that only reads the session
// ref names, and finds it (see Scope.Resolve).
func (inv *Invocation) ReadSession(ctx context.Context, ref string) (loom.Engine, *loom.Session, error) {
	return inv.openSession(ctx, AccessRead, ref)
}

func (inv *Invocation) openSession(ctx context.Context, access Access, ref string) (loom.Engine, *loom.Session, error) {
	st, err := inv.open(ctx, access)
	if err != nil {
		return nil, nil, err
	}
	s, err := inv.Scope().Resolve(ctx, st, ref)
	if err != nil {
		return nil, nil, err
	}
	return st, s, nil
}

// open opens the store once per run. A missing store at the default
// location reads as an empty one, so that a fresh machine lists no
// sessions without creating anything; a missing store that --db or
// $LOOM_DB names is an error (exit 1), so that a typo never makes an
// empty store.
func (inv *Invocation) open(ctx context.Context, access Access) (loom.Engine, error) {
	return inv.openWith(ctx, access, inv.OpenStore)
}

// openWith is open with the engine's opener given: OpenStore, or
// OpenReplica's store (CreateReplica).
func (inv *Invocation) openWith(ctx context.Context, access Access, openStore func(ctx context.Context, url string, access Access, opts ...sessionstore.Option) (loom.Engine, error)) (loom.Engine, error) {
	if inv.store != nil {
		// Opened for reading, the store is opened again for writing.
		// Write and create are the same to a store that exists.
		if access <= inv.storeAccess || (access == AccessCreate && inv.storeAccess == AccessWrite && !inv.storeMissing) {
			return inv.store, nil
		}
		if err := inv.closeStore(); err != nil {
			return nil, err
		}
	}
	url, err := inv.DBURL()
	if err != nil {
		return nil, err
	}
	if openStore == nil {
		return nil, fmt.Errorf("no store engine is configured")
	}
	opts, err := inv.storeOptions(access)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, url, access, opts...)
	missing := false
	if loom.ErrorCode(err) == loom.ENOTFOUND {
		if inv.flags.db != "" || inv.Getenv("LOOM_DB") != "" {
			return nil, errors.New(loom.ErrorMessage(err))
		}
		st, err, missing = &EmptyStore{url: url}, nil, true
	}
	if err != nil {
		return nil, err
	}
	inv.store, inv.storeAccess, inv.storeMissing = st, access, missing
	if !missing {
		inv.opened = true
		inv.adoptHere(ctx, st)
	}
	return st, nil
}

// StoreFile returns the file the store of this run keeps (the
// Factory's StoreFile of its URL), and "" when it is a server's or
// none is known.
func (inv *Invocation) StoreFile() string {
	url, err := inv.DBURL()
	if err != nil || inv.Factory.StoreFile == nil {
		return ""
	}
	return inv.Factory.StoreFile(url)
}

// StoreMissing reports whether the store the run opened last does not
// exist yet: an EmptyStore stands for it, which reads as empty.
func (inv *Invocation) StoreMissing() bool { return inv.store != nil && inv.storeMissing }

// storeOptions are how the store is to write: with config.toml's
// [secrets] redact_on_write (or LOOM_REDACT_ON_WRITE), replacing
// secrets by markers in every text written, a rule of the store itself
// (sessionstore.Redacting), so that the store stays the engine's with
// all it provides. A configuration that cannot be read is an error for
// a store opened to write, which would otherwise write what it was
// told to redact; a store opened to read writes nothing, and the
// command reports the configuration where it reads it.
func (inv *Invocation) storeOptions(access Access) ([]sessionstore.Option, error) {
	c, _, err := inv.Config()
	if err != nil {
		if access == AccessRead {
			return nil, nil
		}
		return nil, fmt.Errorf("%s (so loom cannot tell whether to redact secrets as it writes, and writes nothing)", loom.ErrorMessage(err))
	}
	if !c.Secrets.RedactOnWrite {
		return nil, nil
	}
	d, err := c.Secrets.Detector()
	if err != nil {
		return nil, err
	}
	return []sessionstore.Option{sessionstore.Redacting(d)}, nil
}

// RedactOnWrite returns text as the store writes it: redacted with
// config.toml's [secrets] redact_on_write (or LOOM_REDACT_ON_WRITE), as
// it is; a line a command prints of what it wrote (a title) is then
// what the store holds. A configuration that cannot be read, under
// which the store writes nothing, prints nothing of text either.
func (inv *Invocation) RedactOnWrite(text string) string {
	c, _, err := inv.Config()
	if err != nil {
		return ""
	}
	if !c.Secrets.RedactOnWrite {
		return text
	}
	d, err := c.Secrets.Detector()
	if err != nil {
		return ""
	}
	red, _ := d.Redact(text)
	return red
}

// closeStore closes the store if the run opened it.
func (inv *Invocation) closeStore() error {
	if inv.store == nil {
		return nil
	}
	err := inv.store.Close()
	inv.store = nil
	return err
}

// Close ends what the run opened: the connections to MCP servers and
// the store.
func (inv *Invocation) Close() error {
	if inv.mcp != nil {
		inv.mcp.Close()
	}
	for _, st := range inv.teamStores {
		st.Close()
	}
	inv.teamStores = nil
	return inv.closeStore()
}

// Project returns the project of the working directory.
func (inv *Invocation) Project() (loom.Project, error) {
	wd, err := inv.Cwd()
	if err != nil {
		return loom.Project{}, err
	}
	if inv.project != nil && inv.projectWD == wd {
		return *inv.project, nil
	}
	p, err := paths.DetectProject(wd)
	if err == nil {
		inv.project, inv.projectWD = &p, wd
	}
	return p, err
}

// Scope is whose sessions this run works on and the project it prefers,
// as the flags and the working directory say when it is asked.
func (inv *Invocation) Scope() Scope {
	return Scope{IO: inv.IO, User: inv.User, Project: inv.Project, Team: inv.InTeam}
}

// OnInterrupt makes h receive Ctrl+C instead of it cancelling the
// command (nil: Ctrl+C cancels again).
func (inv *Invocation) OnInterrupt(h func()) {
	if h == nil {
		inv.onInterrupt.Store(nil)
		return
	}
	inv.onInterrupt.Store(&h)
}

// Interrupt hands Ctrl+C to the handler a command set, and reports
// whether there was one.
func (inv *Invocation) Interrupt() bool {
	h := inv.onInterrupt.Load()
	if h == nil {
		return false
	}
	(*h)()
	return true
}

// DamageHint adds to an error of a damaged store file what to do next,
// as Factory.Damage tells such errors: a store that opened saves what it
// still holds with a salvaging export; one that did not open is moved
// aside, for sync or SQLite's recovery to bring back what they can.
func (inv *Invocation) DamageHint(err error) error {
	if inv.Damage == nil || err == nil {
		return err
	}
	kind := inv.Damage(err)
	if kind == Undamaged {
		return err
	}
	db, derr := inv.DBURL()
	if derr != nil {
		db = "the store file"
	}
	const aside = "move it aside with its -wal and -shm files and loom starts a new store there; loom sync brings back what the hub holds, and sqlite3's .recover may rescue the rest (docs/reliability.md, \"A damaged store file\")"
	switch {
	case kind == NotAStore:
		return fmt.Errorf("%w; %s is not a loom store, or its start is damaged: check --db and LOOM_DB, or %s", err, db, aside)
	case !inv.opened:
		return fmt.Errorf("%w; %s is damaged and does not open: %s", err, db, aside)
	}
	return fmt.Errorf("%w; %s is damaged: loom session export --all --salvage -o rescued.jsonl saves what it still holds, to import into a new store (docs/reliability.md, \"A damaged store file\")", err, db)
}
