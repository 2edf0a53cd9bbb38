// Package postgres is loom's engine for PostgreSQL: the same tables as the
// SQLite engine in the schema that the connection's search_path names, a
// tsvector column with a GIN index for search, and leases for locks held
// from other hosts. Several loom processes on several machines can share
// one database.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

var _ loom.Store = (*Store)(nil)

// Store is a loom.Store on a PostgreSQL database.
type Store struct {
	pool *pgxpool.Pool

	// Now returns the current time; tests replace it. Times are taken in
	// Go, not from the server, so that a store behaves like the SQLite one.
	Now func() time.Time

	owner string // identifies this handle's locks
	pid   int
	host  string

	closeOnce sync.Once
	close     func()
}

// IsURL reports whether dsn names a PostgreSQL database (postgres:// or
// postgresql://) rather than a SQLite file.
func IsURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open connects to the database at url (postgres://… or postgresql://…)
// and brings its schema up to date. Tables live in the first schema of
// the connection's search_path: add search_path=NAME to the URL to keep
// loom in a schema of its own.
//
// Handles opened with the same URL in one process share one connection
// pool (a PostgreSQL connection is a server process, and the first
// queries on it are slow): the second Open costs no connection and no
// migration check. Each handle still holds its own locks, like a process
// of its own.
func Open(ctx context.Context, url string) (*Store, error) {
	if !IsURL(url) {
		return nil, loom.Errorf(loom.EINVALID, "not a PostgreSQL URL (want postgres://… or postgresql://…)")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, loom.Errorf(loom.EINVALID, "database URL: %s", err)
	}
	pools.Lock()
	e := pools.m[url]
	first := e == nil
	if first {
		e = &sharedPool{ready: make(chan struct{})}
		pools.m[url] = e
	}
	e.refs++
	pools.Unlock()
	if first {
		e.pool, e.err = connect(ctx, cfg)
		close(e.ready)
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		pools.release(url, e)
		return nil, ctx.Err()
	}
	if e.err != nil {
		pools.release(url, e)
		return nil, e.err
	}
	s := newStore(e.pool)
	s.close = func() { pools.release(url, e) }
	return s, nil
}

// OpenConfig is Open with a pool configuration built by the caller, for
// settings a URL cannot carry (TLS material, an AfterConnect hook). The
// store has a pool of its own, closed by Close.
func OpenConfig(ctx context.Context, cfg *pgxpool.Config) (*Store, error) {
	pool, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := newStore(pool)
	s.close = pool.Close
	return s, nil
}

// connect makes a pool and migrates the database it reaches.
func connect(ctx context.Context, cfg *pgxpool.Config) (*pgxpool.Pool, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", describe(cfg), err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open %s: %w", describe(cfg), err)
	}
	return pool, nil
}

func newStore(pool *pgxpool.Pool) *Store {
	host, _ := os.Hostname()
	return &Store{
		pool:  pool,
		Now:   loom.Now,
		owner: loom.NewID(),
		pid:   os.Getpid(),
		host:  host,
	}
}

// pools are the connection pools of this process, by URL.
var pools = poolRegistry{m: map[string]*sharedPool{}}

type poolRegistry struct {
	sync.Mutex
	m map[string]*sharedPool
}

// sharedPool is one URL's pool. The first Open makes it (ready closes
// then); the last Close closes it. A pool that failed to open is
// forgotten as soon as nobody waits on it, so a later Open tries again.
type sharedPool struct {
	ready chan struct{}
	pool  *pgxpool.Pool
	err   error
	refs  int
}

func (r *poolRegistry) release(url string, e *sharedPool) {
	r.Lock()
	defer r.Unlock()
	e.refs--
	if e.refs > 0 {
		return
	}
	if r.m[url] == e {
		delete(r.m, url)
	}
	if e.pool != nil {
		e.pool.Close()
	}
}

// describe names a database for error messages, without its password.
func describe(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	return fmt.Sprintf("postgres://%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// Pool returns the connection pool, for tools that need SQL the Store
// does not offer.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close releases the handle (and its pool, when no other handle uses
// it). Locks this handle holds stay until their leases are released or
// expire. Closing twice is harmless.
func (s *Store) Close() error {
	s.closeOnce.Do(s.close)
	return nil
}

// migrate runs the embedded migrations not yet recorded in
// schema_migrations, all in one transaction under an advisory lock, so
// that several servers starting at once migrate exactly once. A database
// already up to date costs one read.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	latest := len(names)
	var version int
	err = pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&version)
	switch {
	case err == nil && version >= latest:
		return nil
	case err != nil && pgCode(err) != "42P01": // undefined_table: a new database
		return fmt.Errorf("read schema version: %w", err)
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var schema *string
		if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if schema == nil {
			return loom.Errorf(loom.EINVALID, "no schema to create loom's tables in: the search_path names none that exists")
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('loom migrate ' || current_schema(), 0))`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		// Read again under the lock: another server may have migrated
		// meanwhile.
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		for i := version; i < latest; i++ {
			n, err := strconv.Atoi(strings.SplitN(path.Base(names[i]), "_", 2)[0])
			if err != nil || n != i+1 {
				return fmt.Errorf("migration %s is out of sequence", names[i])
			}
			body, err := migrationFS.ReadFile(names[i])
			if err != nil {
				return err
			}
			// Without arguments pgx sends the file as one simple query,
			// which may hold many statements.
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", names[i], err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, n); err != nil {
				return fmt.Errorf("migration %s: %w", names[i], err)
			}
		}
		return nil
	})
}

// querier is what a pool and a transaction share.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// withTx runs fn in one read-committed transaction. Writers of one
// session serialise on locks that fn takes (see lockSession).
func (s *Store) withTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return textError(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", textError(err))
	}
	return nil
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

func isUnique(err error) bool { return pgCode(err) == "23505" }

// textError turns the server's refusal of text it cannot store (a NUL
// byte, invalid UTF-8) into an invalid-input error.
func textError(err error) error {
	switch pgCode(err) {
	case "22021", "22P05":
		return loom.Errorf(loom.EINVALID, "text PostgreSQL cannot store: %s", serverMessage(err))
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

func optTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
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

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
