package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/postgres"
)

func TestTokens(t *testing.T) {
	dsn := freshSchema(t)
	conformance.RunTokens(t, func(t *testing.T, now func() time.Time) loom.TokenStore { return clocked(t, dsn, now) })
}

// clocked opens a handle on dsn whose clock is now.
func clocked(t *testing.T, dsn string, now func() time.Time) *postgres.Store {
	st := open(t, dsn)
	st.Now = now
	return st
}

// A database made before tokens could expire (schema version 2) is
// migrated to expires_at, and its tokens keep working, for good.
func TestTokenExpiryMigration(t *testing.T) {
	dsn := freshSchema(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for i, f := range []string{"migrations/0001_init.sql", "migrations/0002_tokens.sql"} {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, i+1); err != nil {
			t.Fatal(err)
		}
	}
	secret := loom.NewTokenSecret()
	if _, err := conn.Exec(ctx, `INSERT INTO tokens (id, user_id, name, hash, created_at) VALUES ('t1', 'alice', 'old', $1, '2025-01-02T03:04:05Z')`, loom.HashToken(secret)); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	st := open(t, dsn)
	// Migrations are numbered from 1: the newest is their count.
	files, _ := filepath.Glob("migrations/*.sql")
	var latest int
	if err := st.Pool().QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&latest); err != nil || latest != len(files) || latest == 0 {
		t.Errorf("schema version %d after migrating (%v), want %d", latest, err, len(files))
	}
	st.Now = func() time.Time { return time.Date(2035, 1, 1, 0, 0, 0, 0, time.UTC) }
	tok, err := st.Authenticate(ctx, secret)
	if err != nil || tok.ID != "t1" || tok.ExpiresAt != nil {
		t.Fatalf("a token of schema 2 after migrating: %+v, %v", tok, err)
	}
}

func TestShares(t *testing.T) {
	dsn := freshSchema(t)
	conformance.RunShares(t, func(t *testing.T, now func() time.Time) loom.ShareStore { return clocked(t, dsn, now) })
}
