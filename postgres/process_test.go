package postgres_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/postgres"
)

// engine is how the shared process tests reach PostgreSQL. A child that
// may be killed names its connections, so that the test can wait for
// the server to notice them gone.
var engine = storetest.Engine{
	Tag: func(db, tag string) string { return db + "&application_name=" + tag },
	Settle: func(t *testing.T, st loom.Store, tag string) {
		pool := st.(*postgres.Store).Pool()
		for range 250 {
			var left int
			if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, tag).Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left == 0 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	},
	Open:  func(ctx context.Context, db string) (loom.Engine, error) { return postgres.Open(ctx, db) },
	Check: func(t *testing.T, st loom.Store) { checkIntegrity(t, st.(*postgres.Store)) },
}

// TestMain lets the test binary play a second process: with
// LOOM_TEST_CHILD set it runs that role instead of the tests.
func TestMain(m *testing.M) {
	storetest.ChildMain(engine)
	os.Exit(m.Run())
}

// newDB makes a schema with loom's tables, for child processes to share.
func newDB(t *testing.T) string {
	db := freshSchema(t)
	open(t, db)
	return db
}

// Two processes appending to one session, with no lock between them,
// create it once and keep seq gap-free.
func TestTwoProcessesAppend(t *testing.T) {
	t.Parallel()
	n := 500
	if testing.Short() {
		n = 100
	}
	storetest.TwoProcessesAppend(t, engine, newDB(t), n, true)
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	t.Parallel()
	storetest.LockHeldByAnotherProcess(t, engine, newDB(t))
}

// A lock held from another host binds until its lease expires, whatever
// its pid means here.
func TestLeaseFromAnotherHost(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	id := loom.NewID()
	hold := func(expires time.Time) {
		t.Helper()
		_, err := st.Pool().Exec(ctx, `INSERT INTO locks (session_id, owner, pid, host, since, expires_at)
			VALUES ($1, 'elsewhere', 1, 'another-host.example', $2, $3)
			ON CONFLICT (session_id) DO UPDATE SET expires_at = excluded.expires_at`,
			id, time.Now().Add(-time.Minute), expires)
		if err != nil {
			t.Fatal(err)
		}
	}
	hold(time.Now().Add(loom.LeaseTTL))
	_, err := st.Lock(ctx, id)
	if loom.ErrorCode(err) != loom.ELOCKED || !strings.Contains(err.Error(), "another-host.example") {
		t.Fatalf("lock held on another host = %v, want ELOCKED naming the host", err)
	}
	s := &loom.Session{ID: id, UserID: "alice"}
	if err := st.Append(ctx, s, storetest.Prompt("x")); loom.ErrorCode(err) != loom.ELOCKED {
		t.Fatalf("append under a live lease = %v, want ELOCKED", err)
	}
	hold(time.Now().Add(-time.Second))
	lease, err := st.Lock(ctx, id)
	if err != nil {
		t.Fatalf("lock after the lease expired: %v", err)
	}
	defer lease.Release(ctx)
	if err := st.Append(ctx, s, storetest.Prompt("x")); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session(ctx, id)
	if err != nil || got.Lock == nil || got.Lock.PID != os.Getpid() {
		t.Fatalf("session lock = %+v, %v", got, err)
	}
}

func TestKilledWhileAppending(t *testing.T) {
	t.Parallel()
	storetest.KilledWhileAppending(t, engine, newDB(t))
}

// checkIntegrity checks what the schema promises: every message has its
// body and no body is orphaned, counters match the rows, seq runs 1…n,
// and the search column is what its expression computes.
func checkIntegrity(t *testing.T, st *postgres.Store) {
	t.Helper()
	for what, q := range map[string]string{
		"orphaned bodies":          `SELECT count(*) FROM bodies b WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.body_id = b.id)`,
		"messages without a body":  `SELECT count(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM bodies b WHERE b.id = m.body_id)`,
		"messages without session": `SELECT count(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = m.session_id)`,
		"wrong counters": `SELECT count(*) FROM sessions s WHERE message_count <> (SELECT count(*) FROM messages WHERE session_id = s.id)
			OR message_count <> coalesce((SELECT max(seq) FROM messages WHERE session_id = s.id), 0)`,
		"stale search entries": `SELECT count(*) FROM bodies WHERE search <> to_tsvector('english', loom_search_text(content))`,
	} {
		var n int
		if err := st.Pool().QueryRow(context.Background(), q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n != 0 {
			t.Fatalf("%d %s", n, what)
		}
	}
}
