package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A store copied to the other engine and back exports the same bytes, the
// way docs/postgres.md moves a store: export --all piped into import, once
// per user. On SQLite the other engine is PostgreSQL, and the reverse.
func TestCopyBetweenEngines(t *testing.T) {
	t.Parallel()
	src := newFixture(t)
	var other string
	if onPostgres() {
		other = filepath.Join(t.TempDir(), "copy.db")
	} else {
		other = freshSchema(t)
	}
	back := newEmptyFixture(t)
	for _, user := range []string{"local", "bob"} {
		first := src.mustExec(t, "--user", user, "session", "export", "--all")
		if n := strings.Count(first, `{"type":"session"`); n == 0 {
			t.Fatalf("%s: nothing exported", user)
		}
		if r := src.exec(t, first, "--db", other, "--user", user, "session", "import", "-"); r.code != 0 {
			t.Fatalf("%s: import into %s: exit %d: %s", user, other, r.code, r.stderr)
		}
		there := src.mustExec(t, "--db", other, "--user", user, "session", "export", "--all")
		if d := firstDifference(first, there); d != "" {
			t.Fatalf("%s: the copy exports differently: %s", user, d)
		}
		if r := back.exec(t, there, "--user", user, "session", "import", "-"); r.code != 0 {
			t.Fatalf("%s: import back: exit %d: %s", user, r.code, r.stderr)
		}
		if d := firstDifference(first, back.mustExec(t, "--user", user, "session", "export", "--all")); d != "" {
			t.Fatalf("%s: the copy of the copy exports differently: %s", user, d)
		}
	}
	// Search works on what was imported: the index is built on import.
	if out := src.mustExec(t, "--db", other, "search", "fake clock"); !strings.Contains(out, src.main.ID) {
		t.Fatalf("search in the copy:\n%s", out)
	}
}

// firstDifference describes the first line where two exports differ, ""
// when they are the same.
func firstDifference(a, b string) string {
	if a == b {
		return ""
	}
	la, lb := lines(a), lines(b)
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n%s\n%s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines and %d", len(la), len(lb))
}
