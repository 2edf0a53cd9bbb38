package clitest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/syncrun"
)

// TestPostgres returns the server the tests run on, "" for SQLite.
func TestPostgres() string { return os.Getenv("LOOM_TEST_POSTGRES") }

// OnPostgres reports whether the tests run on PostgreSQL.
func OnPostgres() bool { return TestPostgres() != "" }

// SkipOnPostgres skips t when the tests run on PostgreSQL, saying why:
// what it tests is the SQLite engine's, or the SQLite pass covers it.
func SkipOnPostgres(t testing.TB, why string) {
	t.Helper()
	if OnPostgres() {
		t.Skip(why)
	}
}

// RealAgentsOnce runs a test of real agents (installed programs, slow
// to start) once, on the SQLite pass, in parallel with the others: what
// it checks is the agent's and the importer's, which no engine changes.
func RealAgentsOnce(t *testing.T) {
	t.Helper()
	SkipOnPostgres(t, "runs the real agents once, on the SQLite pass")
	t.Parallel()
}

// RedactingOnWrite reports whether the command tests run with
// [secrets] redact_on_write on (LOOM_TEST_REDACT_ON_WRITE=true; CI's
// PostgreSQL pass sets it): every loom run of a fixture then gets
// LOOM_REDACT_ON_WRITE=true, so that each command is seen working on a
// store that redacts what it writes. A test whose point is a secret
// stored as it came skips itself then.
func RedactingOnWrite() bool {
	on, _ := strconv.ParseBool(os.Getenv("LOOM_TEST_REDACT_ON_WRITE"))
	return on
}

// SkipWhenRedactingOnWrite skips t when the tests run with
// redact_on_write on, saying why.
func SkipWhenRedactingOnWrite(t testing.TB, why string) {
	t.Helper()
	if RedactingOnWrite() {
		t.Skip("redact_on_write is on (LOOM_TEST_REDACT_ON_WRITE): " + why)
	}
}

// defaultPostgres is the server tests that need PostgreSQL whatever the
// engine under test (copying between engines) use when LOOM_TEST_POSTGRES
// is not set.
const defaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var PgAdmin struct {
	once sync.Once
	url  string
	Pool *pgxpool.Pool
	err  error
}

// FreshSchema makes an empty schema on the test server, dropped when the
// test ends, and returns a URL whose connections use it. Without a
// reachable server the test is skipped, unless LOOM_TEST_POSTGRES asked
// for one or it runs in CI.
func FreshSchema(t testing.TB) string {
	t.Helper()
	pool := PostgresAdmin(t)
	var b [6]byte
	rand.Read(b[:])
	name := "loomcli_" + hex.EncodeToString(b[:])
	if _, err := pool.Exec(context.Background(), `CREATE SCHEMA `+name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		// Subprocesses may still hold connections for a moment; the drop
		// waits for their transactions, not for them to disconnect.
		if _, err := pool.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(PgAdmin.url)
	if err != nil {
		t.Fatalf("LOOM_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// PostgresAdmin returns a pool on the test server for making schemas
// (and tablespaces), skipping the test as freshSchema does without one.
func PostgresAdmin(t testing.TB) *pgxpool.Pool {
	t.Helper()
	PgAdmin.once.Do(func() {
		PgAdmin.url = TestPostgres()
		if PgAdmin.url == "" {
			PgAdmin.url = defaultPostgres
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		PgAdmin.Pool, PgAdmin.err = pgxpool.New(ctx, PgAdmin.url)
		if PgAdmin.err == nil {
			PgAdmin.err = PgAdmin.Pool.Ping(ctx)
		}
	})
	if PgAdmin.err != nil {
		msg := fmt.Sprintf("PostgreSQL is unreachable (set LOOM_TEST_POSTGRES): %v", PgAdmin.err)
		if OnPostgres() || os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return PgAdmin.Pool
}

// PostgresURL returns the URL of the test server (the database its
// schemas are made in), skipping the test as PostgresAdmin does without
// one.
func PostgresURL(t testing.TB) string {
	t.Helper()
	PostgresAdmin(t)
	return PgAdmin.url
}

// OpenEngine opens the store a URL names with the engine cmd/loom would
// pick for it.
func OpenEngine(ctx context.Context, dsn string, opts ...sessionstore.Option) (FixtureEngine, error) {
	o, err := openEngine(ctx, dsn, sqlite.ModeCreate, opts...)
	if err != nil {
		return nil, err
	}
	return o.st, nil
}

// openFor opens the store a URL names as cmd/loom does for a command
// with the given access, its clock now (loom.Now when nil).
func openFor(ctx context.Context, dsn string, access cli.Access, now func() time.Time, opts ...sessionstore.Option) (loom.Engine, error) {
	mode := sqlite.ModeCreate
	switch access {
	case cli.AccessRead:
		mode = sqlite.ModeRead
	case cli.AccessWrite:
		mode = sqlite.ModeWrite
	}
	o, err := openEngine(ctx, dsn, mode, opts...)
	if err != nil {
		return nil, err
	}
	if now != nil {
		o.setNow(now)
	}
	return o.st, nil
}

// openReplica opens the store a URL names as cmd/loom does for loom
// sync, its clock now (loom.Now when nil).
func openReplica(ctx context.Context, dsn string, now func() time.Time, opts ...sessionstore.Option) (loom.Engine, syncrun.Store, error) {
	o, err := openEngine(ctx, dsn, sqlite.ModeCreate, opts...)
	if err != nil {
		return nil, nil, err
	}
	if now != nil {
		o.setNow(now)
	}
	return o.st, o.replica, nil
}

// opened is a store a test opened, with what the tests reach of its
// engine besides the store: its tables, and its clock. Each is set
// where the engine is opened, by the code that knows which it is.
type opened struct {
	st FixtureEngine
	// replica is the store as loom sync's replica, nil for PostgreSQL.
	replica syncrun.Store
	db      fixtureDB
	setNow  func(now func() time.Time)
}

// openEngine opens the store a URL names with the engine cmd/loom would
// pick for it, in mode where it is a SQLite file.
func openEngine(ctx context.Context, dsn string, mode sqlite.Mode, opts ...sessionstore.Option) (*opened, error) {
	if postgres.IsURL(dsn) {
		st, err := postgres.Open(ctx, dsn, opts...)
		if err != nil {
			return nil, err
		}
		return &opened{st: st, setNow: func(now func() time.Time) { st.Now = now }, db: fixtureDB{
			queryRow: func(query string, args ...any) row {
				return st.Pool().QueryRow(context.Background(), DollarParams(query), args...)
			},
			exec: func(query string, args ...any) error {
				_, err := st.Pool().Exec(context.Background(), DollarParams(query), args...)
				return err
			},
		}}, nil
	}
	st, err := sqlite.OpenMode(ctx, dsn, mode, opts...)
	if err != nil {
		return nil, err
	}
	return &opened{st: st, replica: st, setNow: func(now func() time.Time) { st.Now = now }, db: fixtureDB{
		queryRow: func(query string, args ...any) row { return st.DB().QueryRow(query, args...) },
		exec: func(query string, args ...any) error {
			_, err := st.DB().Exec(query, args...)
			return err
		},
	}}, nil
}

// FixtureEngine is what the tests use of a store: the store and its
// tokens.
type FixtureEngine interface {
	loom.Engine
	loom.TokenStore
}

// FixtureStore is a store opened by a test, with SQL access to its tables
// for checks the store API does not offer.
type FixtureStore struct {
	FixtureEngine
	db fixtureDB
}

// OpenFixtureStore opens the store a URL names as OpenEngine does, with
// SQL access to its tables; the caller closes it.
func OpenFixtureStore(ctx context.Context, dsn string) (*FixtureStore, error) {
	o, err := openEngine(ctx, dsn, sqlite.ModeCreate)
	if err != nil {
		return nil, err
	}
	return &FixtureStore{FixtureEngine: o.st, db: o.db}, nil
}

// DB returns the store's tables for a test to query.
func (s *FixtureStore) DB() *fixtureDB { return &s.db }

// fixtureDB runs a test's SQL on either engine. Queries are written with
// ? placeholders, as for SQLite; on PostgreSQL they become $1, $2, ….
type fixtureDB struct {
	queryRow func(query string, args ...any) row
	exec     func(query string, args ...any) error
}

// row is what QueryRow returns on both engines.
type row interface{ Scan(dest ...any) error }

// QueryRow runs a query expected to return one row.
func (d *fixtureDB) QueryRow(query string, args ...any) row { return d.queryRow(query, args...) }

// Exec runs a statement.
func (d *fixtureDB) Exec(query string, args ...any) error { return d.exec(query, args...) }

// DollarParams numbers the ? placeholders of query outside string
// literals.
func DollarParams(query string) string {
	var b strings.Builder
	n, quoted := 0, false
	for _, c := range query {
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '?' && !quoted:
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}
