package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
)

// TestRecordedRoots: every project root the user's sessions recorded,
// with its project and how many sessions ran there; another user's
// and those of no root are not listed.
func TestRecordedRoots(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.RecordedRoots(t, st)
}

// TestRecordedRootsFromIndex: the roots are read from the index that
// holds them (migration 0030), in its order: no session row read, no
// sort. Without the index, the plan reads the rows.
func TestRecordedRootsFromIndex(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "s.db")
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	plan := func() string {
		rows, err := raw.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT `+rowscan.RecordedRootColumns+` FROM sessions
			WHERE user_id = ? AND deleted_at IS NULL AND project_root <> '' GROUP BY project_root, project_id`, "u")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var steps []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, detail)
		}
		return strings.Join(steps, " | ")
	}
	if p := plan(); !strings.Contains(p, "COVERING INDEX sessions_recorded_roots") || strings.Contains(p, "TEMP B-TREE") {
		t.Fatalf("the roots are not read from their index alone: %s", p)
	}
	if _, err := raw.ExecContext(ctx, `DROP INDEX sessions_recorded_roots`); err != nil {
		t.Fatal(err)
	}
	if p := plan(); strings.Contains(p, "COVERING INDEX") && !strings.Contains(p, "TEMP B-TREE") {
		t.Fatalf("without the index, the plan still reads an index alone: %s", p)
	}
}
