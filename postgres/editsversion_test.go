package postgres_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestEditsVersionUpdatedByKey: the triggers that set edits_version's
// one row each time what the edit index shows changes (an import sets it
// twice a session) find the row by its key. Its old versions stay in
// the table until a vacuum, which may never come (the server's
// autovacuum may be off): an UPDATE naming no row read them all, each
// time, and an import of 24,000 sessions read 240 pages for each of its
// 48,000 updates. Here the table holds the old versions of thousands of
// updates, as after such an import, and each trigger function's UPDATE
// must read the row through edits_version_pkey.
func TestEditsVersionUpdatedByKey(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	conn := planConn(t, st)
	execAll(t, conn, `DO $$BEGIN FOR i IN 1..20000 LOOP UPDATE edits_version SET n = n + 1 WHERE id = 1; END LOOP; END$$`)
	var pages int
	if err := conn.QueryRow(ctx, `SELECT pg_relation_size('edits_version') / current_setting('block_size')::int`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages < 50 {
		t.Fatalf("edits_version holds %d pages after 20,000 updates: the test does not make what it checks", pages)
	}
	rows, err := conn.Query(ctx, `SELECT proname, prosrc FROM pg_proc WHERE proname LIKE 'loom\_edits\_version\_%' AND pronamespace = current_schema()::regnamespace ORDER BY proname`)
	if err != nil {
		t.Fatal(err)
	}
	type fn struct{ name, src string }
	fns, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (fn, error) {
		var f fn
		return f, r.Scan(&f.name, &f.src)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) != 3 {
		t.Fatalf("%d functions loom_edits_version_*, want 3", len(fns))
	}
	update := regexp.MustCompile(`UPDATE edits_version [^;]*`)
	for _, f := range fns {
		stmt := update.FindString(f.src)
		if stmt == "" {
			t.Fatalf("%s updates no edits_version: %s", f.name, f.src)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		err = tx.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+stmt).Scan(&out)
		tx.Rollback(ctx)
		if err != nil {
			t.Fatalf("%s: %s: %v", f.name, stmt, err)
		}
		var plans []struct {
			Plan planNode `json:"Plan"`
		}
		if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
			t.Fatalf("explain output %s: %v", out, err)
		}
		byKey := false
		plans[0].Plan.walk(func(n planNode) {
			if n.Relation == "edits_version" && n.Index == "edits_version_pkey" {
				byKey = true
			}
		})
		if !byKey {
			t.Errorf("%s: %s reads edits_version without its key: %s", f.name, stmt, out)
		}
	}
}
