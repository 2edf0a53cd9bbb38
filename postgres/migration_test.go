package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom/internal/testkit/storetest"
)

// A store written at schema 5, when forks held copies of their parents'
// rows and rewinds moved rows, reads the same after migration 6 made
// messages read through spans, and goes on: its sessions fork, rewind,
// take writes and are deleted, leaving nothing behind.
func TestSchema5Migration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := storetest.LoadSchema5(t, "postgres")
	dsn := freshSchema(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for i, m := range storetest.Schema5Migrations(t) {
		if _, err := conn.Exec(ctx, m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, i+1); err != nil {
			t.Fatal(err)
		}
	}
	for _, load := range []struct{ table, into string }{
		{"bodies", "bodies (id, parts, content) SELECT id, parts, content"},
		{"sessions", "sessions SELECT *"},
		{"messages", "messages SELECT *"},
	} {
		tag, err := conn.Exec(ctx, `INSERT INTO `+load.into+` FROM json_populate_recordset(NULL::`+load.table+`, $1::json)`, string(f.Tables[load.table]))
		if err != nil || tag.RowsAffected() == 0 {
			t.Fatalf("load %s: %v (%d rows)", load.table, err, tag.RowsAffected())
		}
	}
	if _, err := conn.Exec(ctx, `SELECT setval(pg_get_serial_sequence('bodies', 'id'), max(id)) FROM bodies`); err != nil {
		t.Fatal(err)
	}

	st := open(t, dsn)
	st.Now = f.Clock(t)
	f.CheckReads(t, st)
	storetest.Schema5GoesOn(t, st, f)
	for _, table := range []string{"messages", "bodies", "spans"} {
		var n int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d rows left in %s after every session was purged", n, table)
		}
	}
}
