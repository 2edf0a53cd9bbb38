package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/sqlite"
)

func TestTokens(t *testing.T) {
	open := clocked(filepath.Join(t.TempDir(), "sessions.db"))
	conformance.RunTokens(t, func(t *testing.T, now func() time.Time) loom.TokenStore { return open(t, now) })
}

// clocked opens handles on the store at path whose clock is now.
func clocked(path string) func(t *testing.T, now func() time.Time) *sqlite.Store {
	return func(t *testing.T, now func() time.Time) *sqlite.Store {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		st.Now = now
		t.Cleanup(func() { st.Close() })
		return st
	}
}

// A store made before tokens could expire (schema version 2) is migrated
// to expires_at, and its tokens keep working, for good.
func TestTokenExpiryMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"migrations/0001_init.sql", "migrations/0002_tokens.sql"} {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	secret := loom.NewTokenSecret()
	if _, err := db.Exec(`PRAGMA user_version = 2; PRAGMA journal_mode = WAL;
		INSERT INTO tokens (id, user_id, name, hash, created_at) VALUES ('t1', 'alice', 'old', ?, '2025-01-02T03:04:05.000Z')`, loom.HashToken(secret)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var version int
	st.DB().QueryRow(`PRAGMA user_version`).Scan(&version)
	// Migrations are numbered from 1: the newest is their count.
	if files, _ := filepath.Glob("migrations/*.sql"); version != len(files) || version == 0 {
		t.Errorf("user_version = %d after migrating, want %d", version, len(files))
	}
	st.Now = func() time.Time { return time.Date(2035, 1, 1, 0, 0, 0, 0, time.UTC) }
	tok, err := st.Authenticate(context.Background(), secret)
	if err != nil || tok.ID != "t1" || tok.ExpiresAt != nil {
		t.Fatalf("a token of schema 2 after migrating: %+v, %v", tok, err)
	}
}

func TestShares(t *testing.T) {
	open := clocked(filepath.Join(t.TempDir(), "sessions.db"))
	conformance.RunShares(t, func(t *testing.T, now func() time.Time) loom.ShareStore { return open(t, now) })
}
