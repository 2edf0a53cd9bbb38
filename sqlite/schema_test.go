package sqlite_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
)

// §3.11: the schema is a contract. The seeds' own queries work unchanged,
// deleting a session's messages and then its row by hand leaves a
// consistent store (the search index follows), and migrations are
// versioned with PRAGMA user_version and STRICT tables in WAL mode.
func TestSchemaContract(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keep := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:keep"}
	gone := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:gone"}
	if err := st.Append(ctx, keep, msg("kept words about lighthouses")); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(ctx, gone, msg("doomed words about lighthouses"), msg("more doomed words")); err != nil {
		t.Fatal(err)
	}
	fork, err := st.Fork(ctx, gone.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db := st.DB()

	// The seeds' listing query.
	rows, err := db.Query(`SELECT id, created_at, updated_at FROM sessions ORDER BY updated_at DESC;`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var id, created, updated string
		if err := rows.Scan(&id, &created, &updated); err != nil {
			t.Fatal(err)
		}
		if _, err := loom.ParseTime(created); err != nil {
			t.Fatalf("created_at %q is not RFC 3339", created)
		}
		n++
	}
	rows.Close()
	if n != 3 {
		t.Fatalf("listing found %d sessions", n)
	}

	// The seeds' deletion, by hand, of a session whose rows a fork reads.
	if _, err := db.Exec(`DELETE FROM messages WHERE session_id = ?; DELETE FROM sessions WHERE id = ?;`, gone.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(ctx, gone.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("deleted session still there: %v", err)
	}
	// The fork keeps its history (a copy of the rows it read, made as
	// they were deleted) and stays searchable; nothing of the deleted
	// session is found.
	hits, err := st.Search(ctx, loom.SearchQuery{Text: "doomed", UserID: "local"})
	if err != nil || len(hits) != 2 || hits[0].SessionID != fork.ID {
		t.Fatalf("search after hand deletion = %+v, %v", hits, err)
	}
	// Now delete the fork by hand too: its bodies and index entries go.
	if _, err := db.Exec(`DELETE FROM messages WHERE session_id = ?; DELETE FROM sessions WHERE id = ?;`, fork.ID, fork.ID); err != nil {
		t.Fatal(err)
	}
	if hits, _ := st.Search(ctx, loom.SearchQuery{Text: "doomed", UserID: "local"}); len(hits) != 0 {
		t.Fatalf("index kept deleted messages: %+v", hits)
	}
	var bodies int
	db.QueryRow(`SELECT count(*) FROM bodies`).Scan(&bodies)
	if bodies != 1 {
		t.Fatalf("%d bodies left, want only the kept session's 1", bodies)
	}
	checkIntegrity(t, st)
	if err := st.Append(ctx, keep, msg("the store goes on")); err != nil {
		t.Fatal(err)
	}

	// Versioned migrations, STRICT tables, WAL.
	var version int
	db.QueryRow(`PRAGMA user_version`).Scan(&version)
	if version < 1 {
		t.Fatalf("user_version = %d", version)
	}
	var mode string
	db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	if mode != "wal" {
		t.Fatalf("journal_mode = %s", mode)
	}
	for _, table := range []string{"sessions", "messages", "bodies", "locks"} {
		var sqlText string
		db.QueryRow(`SELECT sql FROM sqlite_schema WHERE name = ?`, table).Scan(&sqlText)
		if !strings.Contains(sqlText, "STRICT") {
			t.Fatalf("table %s is not STRICT", table)
		}
	}
	// STRICT rejects a wrongly typed value.
	if _, err := db.Exec(`UPDATE sessions SET message_count = 'many' WHERE id = ?`, keep.ID); err == nil {
		t.Fatal("a STRICT table took text into an integer column")
	}
	// Opening again does not migrate again.
	st2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	st2.Close()

	// The sqlite3 shell reads the file as documented, when it is installed.
	if sh, err := exec.LookPath("sqlite3"); err == nil {
		out, err := exec.Command(sh, path, "SELECT id, created_at, updated_at FROM sessions ORDER BY updated_at DESC;").CombinedOutput()
		if err != nil || !strings.Contains(string(out), keep.ID) {
			t.Fatalf("sqlite3: %s %v", out, err)
		}
	}
}

// The recipes of docs/schema.md on a family whose history lies in
// several sessions' rows (forks read their parents' rows, a rewound
// session its old ones): deleting any session's messages and then its
// row by hand leaves every other session whole, and deleting them all
// leaves nothing behind.
func TestHandDeletionKeepsLineage(t *testing.T) {
	for _, order := range [][]string{{"root", "fork", "grand", "rewound"}, {"rewound", "grand", "fork", "root"}, {"fork", "root", "rewound", "grand"}} {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			ctx := context.Background()
			st := tempStore(t)
			ids, holds := storetest.Lineage(t, st)
			db := st.DB()
			// Reading a session's messages by hand, through the view.
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM session_messages WHERE session_id = ?`, ids["grand"]).Scan(&n); err != nil || n != 7 {
				t.Fatalf("session_messages of the grandchild = %d, %v", n, err)
			}
			// By the sqlite3 shell when it is installed, as the recipe
			// says: the triggers run in the C SQLite as they do here.
			sh, _ := exec.LookPath("sqlite3")
			for _, name := range order {
				id := ids[name]
				recipe := `DELETE FROM messages WHERE session_id = '` + id + `'; DELETE FROM sessions WHERE id = '` + id + `';`
				if sh != "" {
					if out, err := exec.Command(sh, st.Path(), recipe).CombinedOutput(); err != nil {
						t.Fatalf("sqlite3: %s %v", out, err)
					}
				} else if _, err := db.Exec(recipe); err != nil {
					t.Fatal(err)
				}
				delete(holds, id)
				if _, err := st.Session(ctx, id); loom.ErrorCode(err) != loom.ENOTFOUND {
					t.Fatalf("%s still there: %v", name, err)
				}
				storetest.CheckHolds(t, st, holds)
				checkIntegrity(t, st)
			}
			for _, table := range []string{"messages", "bodies", "spans", "bodies_fts"} {
				if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 0 {
					t.Errorf("%d rows left in %s", n, table)
				}
			}
		})
	}
}
