package cli

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/syncrun"
)

// Two machines add a turn to one session at the same time: the sync that
// moves this machine's turn to a conflict fork says so in one line,
// naming the session, the fork and how to go on there; the other
// machine's sync says nothing of it.
func TestSyncSaysConflict(t *testing.T) {
	t.Parallel()
	if onPostgres() {
		t.Skip("sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	}
	a, b, _, _ := syncPair(t, "")
	say(t, a, "plan", 1)
	converge(t, []string{"plan"}, a, b)
	say(t, a, "plan", 1) // first: its turn keeps the session
	say(t, b, "plan", 1)
	if r := a.exec(t, "", "sync"); r.code != 0 || strings.Contains(r.stderr, "conflict") {
		t.Fatalf("the first machine's sync: exit %d, %q", r.code, r.stderr)
	}
	r := b.exec(t, "", "sync", "--json")
	if r.code != 0 {
		t.Fatalf("loom sync: exit %d, %s", r.code, r.stderr)
	}
	res := decodeJSON[syncrun.Result](t, r.stdout)
	if len(res.Conflicts) != 1 || res.Conflicts[0].SessionTitle != "plan" {
		t.Fatalf("the sync's conflicts: %+v", res.Conflicts)
	}
	id := res.Conflicts[0].ID
	if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || !strings.Contains(r.stderr, `Your turns in "plan"`) ||
		!strings.Contains(r.stderr, `"plan (conflict)"`) || !strings.Contains(r.stderr, "loom -r "+id) {
		t.Fatalf("what loom sync said: %q", r.stderr)
	}
	// The id it names is the fork's: the first turn, then b's.
	if out := b.mustExec(t, "session", "show", id); strings.Count(out, "wombat user 0 of plan") != 2 {
		t.Fatalf("the conflict fork:\n%s", out)
	}
	if r := b.exec(t, "", "sync"); strings.Contains(r.stderr, "conflict") {
		t.Fatalf("the next sync says it again: %q", r.stderr)
	}
}
