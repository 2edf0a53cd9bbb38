package session_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A store copied to the other engine and back exports the same bytes, the
// way docs/postgres.md moves a store: export --all piped into import, once
// per user. On SQLite the other engine is PostgreSQL, and the reverse.
func TestCopyBetweenEngines(t *testing.T) {
	t.Parallel()
	src := clitest.NewFixture(t)
	var other string
	if clitest.OnPostgres() {
		other = filepath.Join(t.TempDir(), "copy.db")
	} else {
		other = clitest.FreshSchema(t)
	}
	back := clitest.NewEmptyFixture(t)
	for _, user := range []string{"local", "bob"} {
		first := src.MustExec(t, "--user", user, "session", "export", "--all")
		if n := strings.Count(first, `{"type":"session"`); n == 0 {
			t.Fatalf("%s: nothing exported", user)
		}
		if r := src.Exec(t, first, "--db", other, "--user", user, "session", "import", "-"); r.Code != 0 {
			t.Fatalf("%s: import into %s: exit %d: %s", user, other, r.Code, r.Stderr)
		}
		there := src.MustExec(t, "--db", other, "--user", user, "session", "export", "--all")
		if d := firstDifference(first, there); d != "" {
			t.Fatalf("%s: the copy exports differently: %s", user, d)
		}
		if r := back.Exec(t, there, "--user", user, "session", "import", "-"); r.Code != 0 {
			t.Fatalf("%s: import back: exit %d: %s", user, r.Code, r.Stderr)
		}
		if d := firstDifference(first, back.MustExec(t, "--user", user, "session", "export", "--all")); d != "" {
			t.Fatalf("%s: the copy of the copy exports differently: %s", user, d)
		}
	}
	// Search works on what was imported: the index is built on import.
	if out := src.MustExec(t, "--db", other, "search", "fake clock"); !strings.Contains(out, src.Main.ID) {
		t.Fatalf("search in the copy:\n%s", out)
	}
}

// firstDifference describes the first line where two exports differ, ""
// when they are the same.
func firstDifference(a, b string) string {
	if a == b {
		return ""
	}
	la, lb := clitest.Lines(a), clitest.Lines(b)
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n%s\n%s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines and %d", len(la), len(lb))
}
