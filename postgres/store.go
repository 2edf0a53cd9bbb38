// Package postgres is loom's engine for PostgreSQL: the same tables as the
// SQLite engine in the schema that the connection's search_path names, a
// tsvector column with a GIN index for search, and leases for locks held
// from other hosts. Several loom processes on several machines can share
// one database.
//
// Its write transaction serves the roles of sessionstore.Tx a store that
// keeps no sync log needs, each step in PostgreSQL's SQL, some sent in
// one round trip (the number is the role's methods):
//
//	SessionSteps 12, BodySteps 9, ForkSteps 8 (ForkReads 5 of them),
//	TrashSteps 6, ImportSteps 4, PromptTx 1, Ender 1.
//
// It keeps no sync log (a PostgreSQL store is shared by its machines
// already, or a hub's), so it serves none of sync's roles (LogRows,
// ApplySteps, MergeSteps, LineageSteps, StampSteps, KeySteps,
// FragmentSteps, HistorySteps) and records nothing. Beside it:
// sessionstore.Engine (12 methods: Begin, Now, BeginPut, Locker 5,
// Grants 4), SyncTx 3 with PutWrites 4 (a hub's put of records), LockTx
// 2 with LockWrites 3. docs/architecture.md says what each role is.
package postgres

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom/sessionstore"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// The compiler checks that a Store is all three.
var (
	_ loom.Store          = (*Store)(nil)
	_ loom.TokenStore     = (*Store)(nil)
	_ loom.SyncStore      = (*Store)(nil)
	_ loom.ActivityReader = (*Store)(nil)
)

// Store is a loom.Store on a PostgreSQL database.
type Store struct {
	*sessionstore.Store

	pool *connPool

	// Now returns the current time; tests replace it. Times are taken in
	// Go, not from the server, so that a store behaves like the SQLite one.
	Now func() time.Time
	// LeaseTTL is how long this handle's locks stay trusted by handles
	// on other hosts without renewal (loom.LeaseTTL unless the URL's
	// lease_ttl or the caller sets it before the first Lock).
	LeaseTTL time.Duration

	holder sessionstore.Holder // whose locks this handle's are

	// locks is the pool of the connections that hold the hub's locks
	// (hublocks.go), made at the first.
	locksMu sync.Mutex
	locks   *pgxpool.Pool

	closeOnce sync.Once
	close     func()
}

// IsURL reports whether dsn names a PostgreSQL database (postgres:// or
// postgresql://) rather than a SQLite file.
func IsURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open connects to the database at url (postgres://… or postgresql://…)
// with a connection pool of the store's own, and brings its schema up to
// date. Tables live in the first schema of the connection's search_path:
// add search_path=NAME to the URL to keep loom in a schema of its own.
// One parameter of the URL is loom's and is not sent to the server:
// lease_ttl=DURATION (a Go duration, such as 10s) sets LeaseTTL.
// Options set how its writes go (sessionstore.Redacting).
func Open(ctx context.Context, url string, opts ...sessionstore.Option) (*Store, error) {
	if !IsURL(url) {
		return nil, loom.Errorf(loom.EINVALID, "not a PostgreSQL URL (want postgres://… or postgresql://…)")
	}
	url, ttl, err := leaseTTL(url)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, loom.Errorf(loom.EINVALID, "database URL: %s", err)
	}
	s, err := OpenConfig(ctx, cfg, opts...)
	if err != nil {
		return nil, err
	}
	if ttl > 0 {
		s.LeaseTTL = ttl
	}
	return s, nil
}

// leaseTTL takes the lease_ttl parameter out of a URL.
func leaseTTL(raw string) (string, time.Duration, error) {
	u, err := neturl.Parse(raw)
	if err != nil {
		return "", 0, loom.Errorf(loom.EINVALID, "database URL: %s", err)
	}
	q := u.Query()
	v := q.Get("lease_ttl")
	if !q.Has("lease_ttl") {
		return raw, 0, nil
	}
	ttl, err := time.ParseDuration(v)
	if err != nil || ttl <= 0 {
		return "", 0, loom.Errorf(loom.EINVALID, "database URL: lease_ttl must be a positive duration such as 10s, not %q", v)
	}
	q.Del("lease_ttl")
	u.RawQuery = q.Encode()
	return u.String(), ttl, nil
}

// OpenConfig is Open with a pool configuration built by the caller, for
// settings a URL cannot carry (TLS material, an AfterConnect hook). The
// store has a pool of its own, closed by Close. Its connections end a
// statement whose context ended with a cancel request, whatever
// BuildContextWatcherHandler cfg has (see keepOnCancel).
func OpenConfig(ctx context.Context, cfg *pgxpool.Config, opts ...sessionstore.Option) (*Store, error) {
	cfg = cfg.Copy()
	cfg.ConnConfig.BuildContextWatcherHandler = keepOnCancel
	prepare := cfg.PrepareConn
	if prepare == nil && cfg.BeforeAcquire != nil {
		before := cfg.BeforeAcquire
		prepare = func(ctx context.Context, c *pgx.Conn) (bool, error) { return before(ctx, c), nil }
	}
	cfg.PrepareConn = func(ctx context.Context, c *pgx.Conn) (bool, error) {
		if prepare != nil {
			if ok, err := prepare(ctx, c); !ok || err != nil {
				return ok, err
			}
		}
		return boundNear(ctx, c)
	}
	after := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		if after != nil {
			if err := after(ctx, c); err != nil {
				return err
			}
		}
		if err := noJIT(ctx, c); err != nil {
			return err
		}
		return stopWhenGone(ctx, c)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", describe(cfg), err)
	}
	s, err := OpenPool(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open %s: %w", describe(cfg), connectFailure(err))
	}
	s.close = pool.Close
	return s, nil
}

// OpenPool returns a store on a pool the caller made and keeps: Close
// leaves the pool open. Stores on one pool share its connections but
// hold locks apart, as separate processes would; that is how one process
// keeps several handles on a database without a connection each. The
// pool's connections keep the caller's settings: Open and OpenConfig
// also turn off the server's compiling of queries (see noJIT), have it
// end a statement whose client is gone (see stopWhenGone), and keep a
// connection whose statement's context ended (see keepOnCancel).
func OpenPool(ctx context.Context, pool *pgxpool.Pool, opts ...sessionstore.Option) (*Store, error) {
	if err := migrateSchema(ctx, pool); err != nil {
		return nil, err
	}
	s := &Store{
		pool:     &connPool{pool},
		Now:      loom.Now,
		LeaseTTL: loom.LeaseTTL,
		holder:   sessionstore.NewHolder(),
		close:    func() {},
	}
	s.Store = sessionstore.New(engine{s}, opts...)
	return s, nil
}

// noJIT turns off the server's compiling of queries to machine code
// for a connection of the store. The server compiles a query whose
// estimated cost is high, and its estimate of a search for many rare
// words (the fuzzy tier's variants of a word) is: compiling took 25–30
// ms of a search that found 11 messages in under 1 ms. loom's queries
// are short; none gains from it.
func noJIT(ctx context.Context, c *pgx.Conn) error {
	if _, err := c.Exec(ctx, "SET jit = off"); err != nil {
		return fmt.Errorf("set jit off: %w", err)
	}
	return nil
}

// stopWhenGone has the server check, every second of a statement, that
// the connection's client is still there, and end the statement when it
// is not. A statement whose context ends is cancelled on the server
// (keepOnCancel), but a connection closed while its statement runs (the
// server did not answer the cancel within cancelGrace, the process was
// killed) left the server to run the statement on to its end: a search
// refused after 800 ms went on for 8 s on the server at a million
// messages, and a server shared by many users would gather such work.
// PostgreSQL 13 has
// no such setting (42704, unrecognized configuration parameter): there
// it is not set.
func stopWhenGone(ctx context.Context, c *pgx.Conn) error {
	_, err := c.Exec(ctx, "SET client_connection_check_interval = '1s'")
	if err != nil && pgCode(err) != "42704" {
		return fmt.Errorf("set client_connection_check_interval: %w", err)
	}
	return nil
}

// connectFailure returns err, when it is pgx's for a connection that
// could not be made, as that failure alone with each different reason
// once. pgx names every attempt, and with the default sslmode (prefer)
// makes two to each host, with TLS and without, which fail alike when
// the server is down or refuses the user: the same reason twice in one
// line. What err wraps is kept.
func connectFailure(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	var reasons []string
	var add func(error)
	add = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				add(x)
			}
			return
		}
		if r := e.Error(); !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	if inner := ce.Unwrap(); inner != nil {
		add(inner)
	}
	msg := fmt.Sprintf("cannot connect as user %s to database %s: %s", ce.Config.User, ce.Config.Database, strings.Join(reasons, "; "))
	return &failure{msg: msg, err: err}
}

// failure is an error with a message of its own that still wraps err.
type failure struct {
	msg string
	err error
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return f.err }

// describe names a database for error messages, without its password.
func describe(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	return fmt.Sprintf("postgres://%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// Pool returns the connection pool, for tools that need SQL the Store
// does not offer.
func (s *Store) Pool() *pgxpool.Pool { return s.pool.Pool }

// Close closes the store's pool (one given to OpenPool stays open).
// Locks this handle holds stay until their leases are released or
// expire. Closing twice is harmless.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.locksMu.Lock()
		if s.locks != nil {
			s.locks.Close()
		}
		s.locksMu.Unlock()
		s.close()
	})
	return nil
}

// querier is what a pool and a transaction share.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// rowsOf lets the shared row readers (rowscan.All) query db.
type rowsOf struct{ db querier }

// Query implements rowscan.Querier.
func (r rowsOf) Query(ctx context.Context, sql string, args ...any) (rowscan.Result, error) {
	return r.db.Query(ctx, sql, args...)
}

// withTx runs fn in one read-committed transaction. Writers of one
// session serialise on locks that fn takes (see lockSession).
func (s *Store) withTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", serverError(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after a panic in fn; a no-op once ended
	return (&writeTx{s: s, tx: tx, ctx: ctx}).End(fn(tx))
}

// pgCode returns the SQLSTATE of a server error, "" for any other.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// serverMessage is the server's own words for err, without the SQLSTATE.
func serverMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}

// isUnique reports whether err is a unique_violation (SQLSTATE 23505):
// a key or an id another row already has.
func isUnique(err error) bool { return pgCode(err) == "23505" }

// serverError turns the server's refusals that a user can act on into
// coded errors: text it cannot store (a NUL byte, invalid UTF-8) is
// invalid input, and disk_full (SQLSTATE 53100: no room for a table, an
// index or the write-ahead log) is loom.ENOSPACE. Running out of memory
// (53200) or past a configured limit (53400, such as temp_file_limit)
// is no full disk, and stays the error it is.
func serverError(err error) error {
	switch pgCode(err) {
	case "22021", "22P05":
		return loom.Errorf(loom.EINVALID, "text PostgreSQL cannot store: %s", serverMessage(err))
	case "53100":
		return loom.OutOfSpace(err, "the PostgreSQL server is out of disk space: free some on its machine, then try again")
	}
	return err
}

// ms is how a time is stored: UTC, whole milliseconds, as the SQLite
// engine writes it.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ms(*t)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// storable reports whether PostgreSQL can hold every one of ss. A value
// it cannot hold names nothing stored: looking it up finds nothing.
func storable(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return false
		}
	}
	return true
}

// clean makes derived text storable: PostgreSQL text holds neither NUL
// bytes nor invalid UTF-8.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return s
}
