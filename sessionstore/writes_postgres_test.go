package sessionstore_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sessionstore"
)

// TestEveryWriteIsRedactedOnPostgres is TestEveryWriteIsRedacted on a
// PostgreSQL store: after every write with secrets in all it takes, no
// row of any of the store's tables (read as text, TOAST and all) and no
// pg_dump of its schema holds one of them, and both hold the markers
// that replaced them. The server (LOOM_TEST_POSTGRES, or the test
// server's default URL) unreachable skips it, except in CI.
func TestEveryWriteIsRedactedOnPostgres(t *testing.T) {
	ctx := context.Background()
	if os.Getenv(storetest.PostgresEnv) == "" {
		const local = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(pctx, local)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("PostgreSQL is unreachable (set %s): %v", storetest.PostgresEnv, err)
			}
			t.Skipf("PostgreSQL is unreachable (set %s): %v", storetest.PostgresEnv, err)
		}
		conn.Close(ctx)
		t.Setenv(storetest.PostgresEnv, local)
	}
	dsn := storetest.PostgresSchema(t)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(ctx, dsn, sessionstore.Redacting(secrets.Default()))
	if err != nil {
		t.Fatal(err)
	}
	leaks := writeEverySecret(t, st.Store, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	rows, err := pool.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'`, schema)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	var all strings.Builder
	for _, name := range tables {
		rows, err := pool.Query(ctx, `SELECT r::text FROM `+schema+`."`+name+`" r`)
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err != nil {
				t.Fatal(err)
			}
			text.WriteString(row)
			text.WriteByte('\n')
		}
		rows.Close()
		leaks("table "+name, []byte(text.String()))
		all.WriteString(text.String())
	}
	if !strings.Contains(all.String(), secrets.MarkerPrefix) {
		t.Errorf("no table of the schema holds a marker: the writes wrote nowhere read here (tables %v)", tables)
	}

	dump, err := exec.LookPath("pg_dump")
	if err != nil {
		t.Logf("pg_dump is not installed: the tables alone were read")
		return
	}
	out, err := exec.CommandContext(ctx, dump, "--data-only", "--schema="+schema, os.Getenv(storetest.PostgresEnv)).Output()
	if err != nil {
		t.Logf("pg_dump: %v: the tables alone were read", err)
		return
	}
	leaks("pg_dump", out)
	if !strings.Contains(string(out), secrets.MarkerPrefix) {
		t.Errorf("pg_dump of the schema holds no marker (%d bytes)", len(out))
	}
}
