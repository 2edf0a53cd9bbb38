package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// TestMain lets the test binary play a second process: with
// LOOM_TEST_CHILD set it runs that role instead of the tests.
func TestMain(m *testing.M) {
	if role := os.Getenv("LOOM_TEST_CHILD"); role != "" {
		run := child
		if role == "readonly" {
			run = func(_, dbs, session string) error {
				db, old, _ := strings.Cut(dbs, "\n")
				return checkReadOnly(db, old, session)
			}
		}
		if err := run(role, os.Getenv("LOOM_TEST_DB"), os.Getenv("LOOM_TEST_SESSION")); err != nil {
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
//   - loop      appends forever, printing each committed seq;
//   - readonly  runs checkReadOnly on LOOM_TEST_DB (two paths, a line
//     each), as the user the test started it as.
func child(role, db, session string) error {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
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

func childCmd(t *testing.T, role, db, session string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOOM_TEST_CHILD="+role, "LOOM_TEST_DB="+db, "LOOM_TEST_SESSION="+session)
	cmd.Stderr = os.Stderr
	return cmd
}

func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestTwoProcessesAppend(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	db := filepath.Join(t.TempDir(), "sessions.db")
	open(t, db).Close() // create the schema once
	a, b := loom.NewID(), loom.NewID()
	ca, cb := childCmd(t, fmt.Sprintf("append:%d", n), db, a), childCmd(t, fmt.Sprintf("append:%d", n), db, b)
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
	for _, id := range []string{a, b} {
		msgs, err := st.Messages(context.Background(), id, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != n {
			t.Fatalf("session %s has %d messages, want %d", id, len(msgs), n)
		}
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				t.Fatalf("seq gap at %d: %d", i, m.Seq)
			}
		}
	}
	checkIntegrity(t, st)
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	open(t, db).Close()
	id := loom.NewID()
	holder := childCmd(t, "hold", db, id)
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

func TestKilledWhileAppending(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	open(t, db).Close()
	id := loom.NewID()
	w := childCmd(t, "loop", db, id)
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
	checkIntegrity(t, st)
	s, err := st.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := st.Messages(context.Background(), id, loom.MessageQuery{})
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
	lease, err := st.Lock(context.Background(), id)
	if err != nil {
		t.Fatalf("take over after kill: %v", err)
	}
	defer lease.Release(context.Background())
	if err := st.Append(context.Background(), s, msg("after the crash")); err != nil {
		t.Fatal(err)
	}
	hits, err := st.Search(context.Background(), loom.SearchQuery{Text: "crash"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search after crash = %v, %v", hits, err)
	}
}

// checkIntegrity runs SQLite's and FTS5's own integrity checks.
func checkIntegrity(t *testing.T, st *sqlite.Store) {
	t.Helper()
	var res string
	if err := st.DB().QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check = %q, %v", res, err)
	}
	if _, err := st.DB().Exec(`INSERT INTO bodies_fts (bodies_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("fts5 integrity-check: %v", err)
	}
}
