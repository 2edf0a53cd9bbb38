package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom/internal/testkit/testseed"
	"github.com/loomhq/loom/postgres"
)

// A statement whose deadline passes while it runs (a hook's recall out
// of its 100 ms) ends with its context's error and costs nothing else,
// whether the server ended it by its deadline or a cancel request did:
// the pool opens no connection after it, the statement after it, with
// time enough, answers promptly on the same server process with its own
// result, and a read-only transaction whose statement was cancelled is
// rolled back with its connection kept. The deadlines, the statements
// (a sleep, a count of a long series) and whether each runs in a
// transaction come from a printed seed.
func TestCancelledStatementKeepsItsConnection(t *testing.T) {
	rng := testseed.Rand(t)

	st := open(t, freshSchema(t))
	defer st.Close()
	pool := postgres.Statements(st)
	ctx := context.Background()
	var pid int32
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	opened := st.Pool().Stat().NewConnsCount()
	statements := []string{
		`SELECT pg_sleep(5)::text`,
		`SELECT count(*)::text FROM generate_series(1, 2000000000)`,
	}
	var late [2]time.Duration // the longest a statement took past a near deadline, a far one
	for i := range 12 {
		sql := statements[rng.IntN(len(statements))]
		// Near deadlines, which the server keeps (statement_timeout),
		// and farther ones, which a cancel request ends.
		wait := time.Duration(10+rng.IntN(60)) * time.Millisecond
		if rng.IntN(2) == 0 {
			wait = time.Duration(250+rng.IntN(200)) * time.Millisecond
		}
		inTx := rng.IntN(2) == 0
		dctx, cancel := context.WithTimeout(ctx, wait)
		start := time.Now()
		var err error
		if inTx {
			var tx pgx.Tx
			if tx, err = pool.BeginTx(dctx, pgx.TxOptions{AccessMode: pgx.ReadOnly}); err == nil {
				var s string
				err = tx.QueryRow(dctx, sql).Scan(&s)
				if rerr := tx.Rollback(dctx); rerr != nil {
					t.Errorf("statement %d: rollback after the deadline: %v", i, rerr)
				}
			}
		} else {
			var s string
			err = pool.QueryRow(dctx, sql).Scan(&s)
		}
		cancel()
		took := time.Since(start)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("statement %d (%q, deadline %v, in a transaction %v): got %v, want the deadline's error", i, sql, wait, inTx, err)
		}
		far := 0
		if wait > 200*time.Millisecond {
			far = 1
		}
		late[far] = max(late[far], took-wait)
		if took > wait+2*time.Second {
			t.Errorf("statement %d: ended %v after a deadline of %v", i, took, wait)
		}

		// The next statement, with time enough: prompt, its own answer,
		// on the same server process.
		gctx, gcancel := context.WithTimeout(ctx, 5*time.Second)
		start = time.Now()
		var got, same int32
		want := rng.Int32()
		err = pool.QueryRow(gctx, `SELECT $1::int, pg_backend_pid()`, want).Scan(&got, &same)
		took = time.Since(start)
		gcancel()
		if err != nil {
			t.Fatalf("statement %d: the statement after a cancelled one: %v", i, err)
		}
		if got != want {
			t.Fatalf("statement %d: the statement after a cancelled one answered %d, want %d", i, got, want)
		}
		if same != pid {
			t.Errorf("statement %d: the statement after a cancelled one ran on server process %d, want %d (the connection was lost)", i, same, pid)
		}
		if took > time.Second {
			t.Errorf("statement %d: the statement after a cancelled one took %v", i, took)
		}
		// With no deadline, no bound of an earlier statement's.
		var timeout string
		if err := pool.QueryRow(ctx, `SHOW statement_timeout`).Scan(&timeout); err != nil || timeout != "0" {
			t.Errorf("statement %d: a statement with no deadline after a cancelled one has statement_timeout %q (%v), want the server's 0", i, timeout, err)
		}
	}
	t.Logf("a cancelled statement returned at most %v after a near deadline, %v after a far one", late[0], late[1])
	if n := st.Pool().Stat().NewConnsCount() - opened; n != 0 {
		t.Errorf("the pool opened %d connections after 12 cancelled statements, want none", n)
	}
}
