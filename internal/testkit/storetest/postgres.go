package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresEnv names the variable that runs a package's tests on
// PostgreSQL instead of SQLite: the URL of a server to make schemas on.
const PostgresEnv = "LOOM_TEST_POSTGRES"

var pgAdmin struct {
	once sync.Once
	pool *pgxpool.Pool
	url  string
	err  error
}

// PostgresSchema creates an empty schema on the server $LOOM_TEST_POSTGRES
// names, dropped when the test ends, and returns a URL whose connections
// use it. The test fails when the variable is not set or the server does
// not answer: it asked for PostgreSQL.
func PostgresSchema(t testing.TB) string {
	t.Helper()
	pgAdmin.once.Do(func() {
		pgAdmin.url = os.Getenv(PostgresEnv)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pgAdmin.pool, pgAdmin.err = pgxpool.New(ctx, pgAdmin.url)
		if pgAdmin.err == nil {
			pgAdmin.err = pgAdmin.pool.Ping(ctx)
		}
	})
	if pgAdmin.url == "" {
		t.Fatalf("%s is not set", PostgresEnv)
	}
	if pgAdmin.err != nil {
		t.Fatalf("PostgreSQL (%s) is unreachable: %v", PostgresEnv, pgAdmin.err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "loomtest_" + hex.EncodeToString(b[:])
	if _, err := pgAdmin.pool.Exec(context.Background(), `CREATE SCHEMA `+name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := pgAdmin.pool.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(pgAdmin.url)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
