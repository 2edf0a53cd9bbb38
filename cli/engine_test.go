package cli

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
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/sqlite"
)

// The command tests run on SQLite files by default. With
// LOOM_TEST_POSTGRES set to a server's URL they run on PostgreSQL
// instead: each fixture gets a schema of its own on that server, is
// populated through the postgres engine, and every loom run (in process
// or as a subprocess) gets LOOM_DB pointing at that schema.

// testPostgres returns the server the tests run on, "" for SQLite.
func testPostgres() string { return os.Getenv("LOOM_TEST_POSTGRES") }

// onPostgres reports whether the tests run on PostgreSQL.
func onPostgres() bool { return testPostgres() != "" }

// defaultPostgres is the server tests that need PostgreSQL whatever the
// engine under test (copying between engines) use when LOOM_TEST_POSTGRES
// is not set.
const defaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var pgAdmin struct {
	once sync.Once
	url  string
	pool *pgxpool.Pool
	err  error
}

// freshSchema makes an empty schema on the test server, dropped when the
// test ends, and returns a URL whose connections use it. Without a
// reachable server the test is skipped, unless LOOM_TEST_POSTGRES asked
// for one or it runs in CI.
func freshSchema(t testing.TB) string {
	t.Helper()
	pool := postgresAdmin(t)
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
	u, err := url.Parse(pgAdmin.url)
	if err != nil {
		t.Fatalf("LOOM_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// postgresAdmin returns a pool on the test server for making schemas
// (and tablespaces), skipping the test as freshSchema does without one.
func postgresAdmin(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pgAdmin.once.Do(func() {
		pgAdmin.url = testPostgres()
		if pgAdmin.url == "" {
			pgAdmin.url = defaultPostgres
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pgAdmin.pool, pgAdmin.err = pgxpool.New(ctx, pgAdmin.url)
		if pgAdmin.err == nil {
			pgAdmin.err = pgAdmin.pool.Ping(ctx)
		}
	})
	if pgAdmin.err != nil {
		msg := fmt.Sprintf("PostgreSQL is unreachable (set LOOM_TEST_POSTGRES): %v", pgAdmin.err)
		if onPostgres() || os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return pgAdmin.pool
}

// openEngine opens the store a URL names with the engine cmd/loom would
// pick for it.
func openEngine(ctx context.Context, dsn string) (fixtureEngine, error) {
	if postgres.IsURL(dsn) {
		st, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	st, err := sqlite.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// openFor opens the store a URL names as cmd/loom does for a command
// with the given access.
func openFor(ctx context.Context, dsn string, access Access) (loom.Store, error) {
	if postgres.IsURL(dsn) {
		return openEngine(ctx, dsn)
	}
	mode := sqlite.ModeCreate
	switch access {
	case AccessRead:
		mode = sqlite.ModeRead
	case AccessWrite:
		mode = sqlite.ModeWrite
	}
	st, err := sqlite.OpenMode(ctx, dsn, mode)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// fixtureEngine is what the tests use of a store: the store and its
// tokens.
type fixtureEngine interface {
	loom.Store
	loom.TokenStore
}

// fixtureStore is a store opened by a test, with SQL access to its tables
// for checks the store API does not offer.
type fixtureStore struct {
	fixtureEngine
}

// DB returns the store's tables for a test to query.
func (s *fixtureStore) DB() *fixtureDB { return &fixtureDB{st: s.fixtureEngine} }

// fixtureDB runs a test's SQL on either engine. Queries are written with
// ? placeholders, as for SQLite; on PostgreSQL they become $1, $2, ….
type fixtureDB struct {
	st fixtureEngine
}

// row is what QueryRow returns on both engines.
type row interface{ Scan(dest ...any) error }

// QueryRow runs a query expected to return one row.
func (d *fixtureDB) QueryRow(query string, args ...any) row {
	switch st := d.st.(type) {
	case *postgres.Store:
		return st.Pool().QueryRow(context.Background(), dollarParams(query), args...)
	case *sqlite.Store:
		return st.DB().QueryRow(query, args...)
	}
	panic("unknown engine")
}

// Exec runs a statement.
func (d *fixtureDB) Exec(query string, args ...any) error {
	switch st := d.st.(type) {
	case *postgres.Store:
		_, err := st.Pool().Exec(context.Background(), dollarParams(query), args...)
		return err
	case *sqlite.Store:
		_, err := st.DB().Exec(query, args...)
		return err
	}
	panic("unknown engine")
}

// dollarParams numbers the ? placeholders of query outside string
// literals.
func dollarParams(query string) string {
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

func TestDollarParams(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`SELECT 1`: `SELECT 1`,
		`SELECT count(*) FROM t WHERE a = ? OR b = ?`: `SELECT count(*) FROM t WHERE a = $1 OR b = $2`,
		`SELECT '?' || ?`:    `SELECT '?' || $1`,
		`SELECT 'it''s?', ?`: `SELECT 'it''s?', $1`,
	} {
		if got := dollarParams(in); got != want {
			t.Errorf("dollarParams(%q) = %q, want %q", in, got, want)
		}
	}
}

// setNow makes st take its times from now.
func setNow(st loom.Store, now func() time.Time) {
	switch st := st.(type) {
	case *postgres.Store:
		st.Now = now
	case *sqlite.Store:
		st.Now = now
	}
}
