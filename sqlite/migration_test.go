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

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
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
	st.Now = f.Clock(t)
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

// A store written at schema 7 kept the text of a one-part message with
// metadata (a compaction summary, a signed thinking block) only in the
// search text, where reads did not look: migration 8 gives it back.
func TestSchema7PartTextBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s := &loom.Session{ID: loom.NewID(), UserID: "u", Key: "cli:api"}
	sum := &loom.Message{Role: loom.RoleSummary, Parts: []loom.Part{{Type: loom.PartText, Text: "what was decided", Metadata: json.RawMessage(`{"trigger":"manual"}`)}}}
	plain := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "a prompt"}}}
	if err := st.Append(ctx, s, plain, sum); err != nil {
		t.Fatal(err)
	}
	// As schema 7 wrote it: the text out of the part with metadata.
	db := st.DB()
	if _, err := db.Exec(`UPDATE bodies SET parts = json_remove(parts, '$[0].text') WHERE parts ->> '$[0].metadata' IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 7`); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Messages(ctx, s.ID, loom.MessageQuery{}); got[1].Text() != "" {
		t.Fatalf("the schema-7 body is not as schema 7 wrote it: %q", got[1].Text())
	}
	st.Close()

	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Messages(ctx, s.ID, loom.MessageQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got[1].Text() != "what was decided" || string(got[1].Parts[0].Metadata) != `{"trigger":"manual"}` {
		t.Errorf("summary after migration 8 = %+v", got[1].Parts)
	}
	if got[0].Text() != "a prompt" {
		t.Errorf("plain message after migration 8 = %q", got[0].Text())
	}
	var once int
	if err := st.DB().QueryRow(`SELECT count(*) FROM bodies WHERE parts ->> '$[0].text' IS NULL`).Scan(&once); err != nil || once != 1 {
		t.Errorf("%d bodies keep their text once after migration 8 (%v), want the plain one", once, err)
	}
}
