package sync_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/syncrun"
)

// The operator of a hub on PostgreSQL changes a byte of the last record
// a machine sent, in the hub's table: the other machine's loom sync
// refuses it (its signature no longer verifies), says so in one line
// naming the host and the record, applies everything else, and exits 0;
// its next sync says nothing of it again.
func TestSyncSetsAsideForgedRecord(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	hubDB := clitest.FreshSchema(t)
	_, _, syncEnv := clitest.StartHub(t, hubDB)
	a, b := clitest.NewFixture(t), clitest.NewEmptyFixture(t)
	a.ExtraEnv, b.ExtraEnv = syncEnv, syncEnv
	key := strings.TrimSpace(a.MustExec(t, "sync", "key"))
	if r := b.Exec(t, key+"\n", "sync", "key", "--set"); r.Code != 0 {
		t.Fatalf("set the key: %s", r.Stderr)
	}
	pushed := clitest.DecodeJSON[syncrun.Result](t, a.MustExec(t, "sync", "--json"))
	if pushed.Pushed < 2 {
		t.Fatalf("the first machine's sync = %+v", pushed)
	}

	pool, err := pgxpool.New(context.Background(), hubDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	tag, err := pool.Exec(context.Background(), `UPDATE sync_records SET body = set_byte(body, length(body) - 1, get_byte(body, length(body) - 1) # 1)
		WHERE host_id = $1 AND idx = $2`, string(pushed.Host), int64(pushed.Pushed))
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("the operator's edit: %v, %v", tag, err)
	}

	r := b.Exec(t, "", "sync")
	line := "loom: sync: writer " + string(pushed.Host) + ", record " + strconv.Itoa(pushed.Pushed) + " (" + syncrun.Nobody + "): set aside: "
	if r.Code != 0 || !strings.Contains(r.Stderr, line) || !strings.Contains(r.Stderr, "not signed by its writer's key") ||
		!strings.Contains(r.Stderr, "loom: sync: 1 record set aside, not applied (the rest was)") ||
		!strings.Contains(r.Stdout, "received "+strconv.Itoa(pushed.Pushed-1)+" records") {
		t.Fatalf("sync past a forged record: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := b.Exec(t, "", "sync"); r.Code != 0 || strings.Contains(r.Stderr, "set aside") {
		t.Fatalf("the next sync: exit %d, %s", r.Code, r.Stderr)
	}
	// Everything else reached the second machine: the fixture's sessions.
	if out := b.MustExec(t, "session", "show", a.Web.ID, "--json"); !strings.Contains(out, a.Web.ID) {
		t.Errorf("the second machine lacks a session: %s", out)
	}
}
