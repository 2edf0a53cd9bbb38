package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/internal/testkit/plantest"
)

// TestRecordedRootsFromIndex: the roots are read from the index that
// holds them (migration 0030), in its order: no session row read, no
// sort. Without the index, the plan reads the rows.
func TestRecordedRootsFromIndex(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "s.db")
	st, err := Open(ctx, db)
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
		steps, err := explain(ctx, raw, plantest.Statement{SQL: `SELECT ` + rowscan.RecordedRootColumns + ` FROM sessions
			WHERE user_id = ? AND deleted_at IS NULL AND project_root <> '' GROUP BY project_root, project_id`, Args: []any{"u"}})
		if err != nil {
			t.Fatal(err)
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
