package sessionstore_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
// that replaced them; where the server's write-ahead log can be read
// (the server on this machine, its files readable by this user), no
// segment written during the test holds one either. The server
// (LOOM_TEST_POSTGRES, or the test server's default URL) unreachable
// skips it, except in CI.
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
	started := time.Now()
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
	walHoldsNone(ctx, t, pool, started, leaks)

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

// walHoldsNone reads the segments of the server's write-ahead log
// written since started, when the server's files are on this machine
// and readable here (CI runs as root beside its server), and checks
// them with leaks: a row redacted in its table but written in the clear
// first would stay in the log. Otherwise it says why it read none.
func walHoldsNone(ctx context.Context, t *testing.T, pool *pgxpool.Pool, started time.Time, leaks func(string, []byte)) {
	t.Helper()
	var dir string
	if err := pool.QueryRow(ctx, `SELECT current_setting('data_directory')`).Scan(&dir); err != nil {
		t.Logf("the write-ahead log was not read: %v", err)
		return
	}
	// Everything written so far goes to the log's files.
	if _, err := pool.Exec(ctx, `SELECT pg_switch_wal()`); err != nil {
		t.Logf("pg_switch_wal: %v", err)
	}
	wal := filepath.Join(dir, "pg_wal")
	entries, err := os.ReadDir(wal)
	if err != nil {
		t.Logf("the write-ahead log was not read: %v", err)
		return
	}
	read, marked := 0, false
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || len(e.Name()) != 24 || info.ModTime().Before(started.Add(-time.Second)) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(wal, e.Name()))
		if err != nil {
			t.Logf("the write-ahead log was not read: %v", err)
			return
		}
		leaks("write-ahead log "+e.Name(), data)
		read++
		marked = marked || bytes.Contains(data, []byte(secrets.MarkerPrefix))
	}
	if read == 0 || !marked {
		t.Errorf("no segment of the write-ahead log in %s written during the test holds a marker (%d read): the writes were not found in it", wal, read)
	}
	t.Logf("%d segments of the write-ahead log read", read)
}
