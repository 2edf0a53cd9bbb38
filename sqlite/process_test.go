package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
)

// engine is how the shared process tests reach SQLite.
var engine = storetest.Engine{
	Open:  func(ctx context.Context, db string) (loom.Engine, error) { return sqlite.Open(ctx, db) },
	Check: func(t *testing.T, st loom.Store) { checkIntegrity(t, st.(*sqlite.Store)) },
}

// msg is a user message of text.
var msg = storetest.Prompt

// TestMain lets the test binary play a second process: with
// LOOM_TEST_CHILD set it runs that role instead of the tests. Besides
// the shared roles (storetest.ChildMain), readonly runs checkReadOnly on
// LOOM_TEST_DB (two paths, a line each), as the user the test started
// it as.
func TestMain(m *testing.M) {
	if role, dbs, session := storetest.ChildRole(); role == "readonly" {
		db, old, _ := strings.Cut(dbs, "\n")
		if err := checkReadOnly(db, old, session); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	storetest.ChildMain(engine)
	os.Exit(m.Run())
}

// newDB makes a store file with its schema, for child processes to share.
func newDB(t *testing.T) string {
	db := filepath.Join(t.TempDir(), "sessions.db")
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return db
}

func TestTwoProcessesAppend(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	storetest.TwoProcessesAppend(t, engine, newDB(t), n, false)
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	storetest.LockHeldByAnotherProcess(t, engine, newDB(t))
}

func TestKilledWhileAppending(t *testing.T) {
	storetest.KilledWhileAppending(t, engine, newDB(t))
}

// checkIntegrity runs SQLite's and FTS5's own integrity checks.
func checkIntegrity(t *testing.T, st *sqlite.Store) {
	t.Helper()
	// FTS5's own check first: PRAGMA integrity_check checks the index
	// with the structure the connection last read, which is stale when
	// another process (the sqlite3 shell) changed the index since, and
	// reports that as corruption; FTS5's command reads it afresh.
	if _, err := st.DB().Exec(`INSERT INTO bodies_fts (bodies_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("fts5 integrity-check: %v", err)
	}
	var res string
	if err := st.DB().QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check = %q, %v", res, err)
	}
}
