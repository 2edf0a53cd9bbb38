package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/storetest"
	"github.com/loomhq/loom/sqlite"
)

// A store written at schema 5, when forks held copies of their parents'
// rows and rewinds moved rows, reads the same after migration 6 made
// messages read through spans, and goes on: its sessions fork, rewind,
// take writes and are deleted, leaving nothing behind.
func TestSchema5Migration(t *testing.T) {
	ctx := context.Background()
	f := storetest.LoadSchema5(t, "sqlite")
	path := filepath.Join(t.TempDir(), "sessions.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range storetest.Schema5Migrations(t) {
		if _, err := db.Exec(m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	if _, err := db.Exec(`PRAGMA user_version = 5; PRAGMA journal_mode = WAL`); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"bodies", "sessions", "messages"} {
		loadRows(t, db, table, f.Tables[table])
	}
	db.Close()

	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f.CheckReads(t, st)
	// Migration 7 left the text of text-only messages out of their parts.
	var once int
	if err := st.DB().QueryRow(`SELECT count(*) FROM bodies WHERE json_array_length(parts) = 1
		AND parts ->> '$[0].type' = 'text' AND parts ->> '$[0].text' IS NULL AND content <> ''`).Scan(&once); err != nil {
		t.Fatal(err)
	}
	if once == 0 {
		t.Error("no body keeps its text once after the migration")
	}
	storetest.Schema5GoesOn(t, st, f)
	checkIntegrity(t, st)
	for _, table := range []string{"messages", "bodies", "spans", "bodies_fts"} {
		var n int
		if err := st.DB().QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d rows left in %s after every session was purged", n, table)
		}
	}
}

// loadRows inserts rows, a JSON array of objects by column, into table.
func loadRows(t *testing.T, db *sql.DB, table string, rows json.RawMessage) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(rows))
	d.UseNumber()
	var list []map[string]any
	if err := d.Decode(&list); err != nil {
		t.Fatal(err)
	}
	for _, row := range list {
		cols := slices.Sorted(maps.Keys(row))
		args := make([]any, len(cols))
		for i, c := range cols {
			args[i] = row[c]
			if n, ok := row[c].(json.Number); ok {
				if v, err := n.Int64(); err == nil {
					args[i] = v
				} else {
					args[i], _ = n.Float64()
				}
			}
		}
		q := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES (` + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + `)`
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if len(list) == 0 {
		t.Fatalf("no rows of %s in the fixture", table)
	}
}
