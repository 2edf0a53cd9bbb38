package postgres_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/postgres"
)

// TestMain lets the test binary play a second process: with
// LOOM_TEST_CHILD set it runs that role instead of the tests.
func TestMain(m *testing.M) {
	if role := os.Getenv("LOOM_TEST_CHILD"); role != "" {
		if err := child(role, os.Getenv("LOOM_TEST_DB"), os.Getenv("LOOM_TEST_SESSION")); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child roles:
//   - append:N  appends N messages, one transaction each;
//   - hold      locks the session, prints "locked", waits to be killed;
//   - loop      appends forever, printing each committed seq.
func child(role, db, session string) error {
	ctx := context.Background()
	st, err := postgres.Open(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	s := &loom.Session{ID: session, UserID: "alice", Key: "cli:" + session}
	name, arg, _ := strings.Cut(role, ":")
	switch name {
	case "append":
		n, _ := strconv.Atoi(arg)
		for i := 0; i < n; i++ {
			if err := st.Append(ctx, s, msg(fmt.Sprintf("message %d from %d", i, os.Getpid()))); err != nil {
				return fmt.Errorf("append %d: %w", i, err)
			}
		}
		return nil
	case "hold":
		if _, err := st.Lock(ctx, session); err != nil {
			return err
		}
		fmt.Println("locked")
		select {}
	case "loop":
		if _, err := st.Lock(ctx, session); err != nil {
			return err
		}
		for i := 0; ; i++ {
			if err := st.Append(ctx, s, msg(fmt.Sprintf("loop message %d with some searchable words", i))); err != nil {
				return err
			}
			fmt.Println(s.MessageCount)
		}
	}
	return fmt.Errorf("unknown role %q", role)
}

func msg(text string) *loom.Message {
	return &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
}

func childCmd(role, db, session string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOOM_TEST_CHILD="+role, "LOOM_TEST_DB="+db, "LOOM_TEST_SESSION="+session)
	cmd.Stderr = os.Stderr
	return cmd
}

// Two processes appending to one session, with no lock between them,
// create it once and keep seq gap-free.
func TestTwoProcessesAppend(t *testing.T) {
	t.Parallel()
	n := 500
	if testing.Short() {
		n = 100
	}
	db := freshSchema(t)
	open(t, db) // create the schema once
	id := loom.NewID()
	ca, cb := childCmd(fmt.Sprintf("append:%d", n), db, id), childCmd(fmt.Sprintf("append:%d", n), db, id)
	if err := ca.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cb.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ca.Wait(); err != nil {
		t.Fatalf("first process: %v", err)
	}
	if err := cb.Wait(); err != nil {
		t.Fatalf("second process: %v", err)
	}
	st := open(t, db)
	msgs, err := st.Messages(context.Background(), id, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2*n {
		t.Fatalf("session has %d messages, want %d", len(msgs), 2*n)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("seq gap at %d: %d", i, m.Seq)
		}
	}
	checkIntegrity(t, st)
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	t.Parallel()
	db := freshSchema(t)
	open(t, db)
	id := loom.NewID()
	holder := childCmd("hold", db, id)
	out, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("holder said %q", line)
	}
	st := open(t, db)
	_, err := st.Lock(context.Background(), id)
	if loom.ErrorCode(err) != loom.ELOCKED {
		t.Fatalf("lock while held = %v, want ELOCKED", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("process %d", holder.Process.Pid)) {
		t.Fatalf("error does not name the holder's pid %d: %v", holder.Process.Pid, err)
	}
	// SIGKILL: the holder cannot release; its lock is taken over.
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	lease, err := st.Lock(context.Background(), id)
	if err != nil {
		t.Fatalf("lock after the holder was killed: %v", err)
	}
	if lease.Lock.PID != os.Getpid() {
		t.Fatalf("lease pid = %d", lease.Lock.PID)
	}
	lease.Release(context.Background())
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
	if err := st.Append(ctx, s, msg("x")); loom.ErrorCode(err) != loom.ELOCKED {
		t.Fatalf("append under a live lease = %v, want ELOCKED", err)
	}
	hold(time.Now().Add(-time.Second))
	lease, err := st.Lock(ctx, id)
	if err != nil {
		t.Fatalf("lock after the lease expired: %v", err)
	}
	defer lease.Release(ctx)
	if err := st.Append(ctx, s, msg("x")); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session(ctx, id)
	if err != nil || got.Lock == nil || got.Lock.PID != os.Getpid() {
		t.Fatalf("session lock = %+v, %v", got, err)
	}
}

func TestKilledWhileAppending(t *testing.T) {
	t.Parallel()
	db := freshSchema(t)
	open(t, db)
	id := loom.NewID()
	app := "loomchild_" + strconv.Itoa(os.Getpid())
	w := childCmd("loop", db+"&application_name="+app, id)
	out, _ := w.StdoutPipe()
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	// Let it commit a few hundred messages, then kill it mid-loop.
	r := bufio.NewScanner(out)
	committed := 0
	for r.Scan() {
		committed, _ = strconv.Atoi(r.Text())
		if committed >= 300 {
			break
		}
	}
	w.Process.Signal(syscall.SIGKILL)
	// Lines printed after the kill decision are commits too.
	for r.Scan() {
		committed, _ = strconv.Atoi(r.Text())
	}
	w.Wait()
	st := open(t, db)
	ctx := context.Background()
	// The server notices the dead connection and rolls back what was
	// not committed; wait until the child's connections are gone.
	for i := 0; i < 250; i++ {
		var left int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkIntegrity(t, st)
	s, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := st.Messages(ctx, id, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// A commit can land after its number was printed but before the kill
	// was seen: the store holds at least what was reported, and at most
	// one more.
	if len(msgs) < committed || len(msgs) > committed+1 || s.MessageCount != len(msgs) {
		t.Fatalf("after kill: %d messages stored, counter %d, %d reported committed", len(msgs), s.MessageCount, committed)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("seq gap at %d: %d", i, m.Seq)
		}
	}
	// The dead writer's lock is taken over and writing continues.
	lease, err := st.Lock(ctx, id)
	if err != nil {
		t.Fatalf("take over after kill: %v", err)
	}
	defer lease.Release(ctx)
	if err := st.Append(ctx, s, msg("after the crash")); err != nil {
		t.Fatal(err)
	}
	hits, err := st.Search(ctx, loom.SearchQuery{Text: "crash"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search after crash = %v, %v", hits, err)
	}
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
