package sync_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/syncrun"
)

// Two machines add a turn to one session at the same time: the sync that
// moves this machine's turn to a conflict fork says so in one line,
// naming the session, the fork and how to go on there; the other
// machine's sync says nothing of it.
func TestSyncSaysConflict(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	a, b, _, _ := clitest.SyncPair(t, "")
	clitest.Say(t, a, "plan", 1)
	converge(t, []string{"plan"}, a, b)
	clitest.Say(t, a, "plan", 1) // first: its turn keeps the session
	clitest.Say(t, b, "plan", 1)
	if r := a.Exec(t, "", "sync"); r.Code != 0 || strings.Contains(r.Stderr, "conflict") {
		t.Fatalf("the first machine's sync: exit %d, %q", r.Code, r.Stderr)
	}
	r := b.Exec(t, "", "sync", "--json")
	if r.Code != 0 {
		t.Fatalf("loom sync: exit %d, %s", r.Code, r.Stderr)
	}
	res := clitest.DecodeJSON[syncrun.Result](t, r.Stdout)
	if len(res.Conflicts) != 1 || res.Conflicts[0].SessionTitle != "plan" {
		t.Fatalf("the sync's conflicts: %+v", res.Conflicts)
	}
	id := res.Conflicts[0].ID
	if strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 || !strings.Contains(r.Stderr, `Your turns in "plan"`) ||
		!strings.Contains(r.Stderr, `"plan (conflict)"`) || !strings.Contains(r.Stderr, "loom -r "+id) {
		t.Fatalf("what loom sync said: %q", r.Stderr)
	}
	// The id it names is the fork's: the first turn, then b's.
	if out := b.MustExec(t, "session", "show", id); strings.Count(out, "wombat user 0 of plan") != 2 {
		t.Fatalf("the conflict fork:\n%s", out)
	}
	if r := b.Exec(t, "", "sync"); strings.Contains(r.Stderr, "conflict") {
		t.Fatalf("the next sync says it again: %q", r.Stderr)
	}
}
