package storetest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/loomhq/loom"
)

// Must returns a store an engine opened, closed when the test ends; an
// error to open fails the test.
//
//	st := storetest.Must(sqlite.Open(ctx, path))(t)
func Must[S io.Closer](st S, err error) func(testing.TB) S {
	return func(t testing.TB) S {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
}

// Engine is how the process tests reach the engine under test. Each test
// binary plays its own second process: its TestMain calls ChildMain.
type Engine struct {
	// Open opens a handle on the database db names.
	Open func(ctx context.Context, db string) (loom.Engine, error)
	// Check runs the engine's own checks of what its schema promises.
	Check func(t *testing.T, st loom.Store)
	// Tag returns how a child that may be killed opens db, so that
	// Settle can tell its connections; nil uses db as it is.
	Tag func(db, tag string) string
	// Settle waits until the database has noticed a killed child tagged
	// tag (a server rolls back what it had not committed); nil when
	// there is nothing to wait for.
	Settle func(t *testing.T, st loom.Store, tag string)
}

// Environment of a child process.
const (
	childRole    = "LOOM_TEST_CHILD"
	childDB      = "LOOM_TEST_DB"
	childSession = "LOOM_TEST_SESSION"
)

// ChildRole returns the role this test binary was started to play, ""
// when it runs tests, with the database and session it plays it on.
func ChildRole() (role, db, session string) {
	return os.Getenv(childRole), os.Getenv(childDB), os.Getenv(childSession)
}

// ChildMain plays the child's role and exits when this binary was started
// as a child, and returns otherwise. The roles:
//   - append:N  appends N messages, one transaction each;
//   - hold      locks the session, prints "locked", waits to be killed;
//   - loop      appends forever, printing each committed seq.
func ChildMain(e Engine) {
	role, db, session := ChildRole()
	if role == "" {
		return
	}
	if err := child(e, role, db, session); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func child(e Engine, role, db, session string) error {
	ctx := context.Background()
	st, err := e.Open(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	s := &loom.Session{ID: session, UserID: "alice", Key: "cli:" + session}
	name, arg, _ := strings.Cut(role, ":")
	switch name {
	case "append":
		n, _ := strconv.Atoi(arg)
		for i := range n {
			if err := st.Append(ctx, s, Prompt(fmt.Sprintf("message %d from %d", i, os.Getpid()))); err != nil {
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
			if err := st.Append(ctx, s, Prompt(fmt.Sprintf("loop message %d with some searchable words", i))); err != nil {
				return err
			}
			fmt.Println(s.MessageCount)
		}
	}
	return fmt.Errorf("unknown role %q", role)
}

// Prompt is a user message of text.
func Prompt(text string) *loom.Message {
	return &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
}

// ChildCmd is this test binary started as a child playing role on the
// session of database db.
func ChildCmd(role, db, session string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childRole+"="+role, childDB+"="+db, childSession+"="+session)
	cmd.Stderr = os.Stderr
	return cmd
}

// TwoProcessesAppend has two processes append n messages each, with no
// lock between them, to one session (shared) or to one each: every
// session created once, seq gap-free.
func TwoProcessesAppend(t *testing.T, e Engine, db string, n int, shared bool) {
	ids := []string{loom.NewID(), loom.NewID()}
	if shared {
		ids[1] = ids[0]
	}
	var cmds []*exec.Cmd
	for _, id := range ids {
		cmd := ChildCmd(fmt.Sprintf("append:%d", n), db, id)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", i+1, err)
		}
	}
	st := Must(e.Open(context.Background(), db))(t)
	want := n
	if shared {
		ids, want = ids[:1], 2*n
	}
	for _, id := range ids {
		msgs, err := st.Messages(context.Background(), id, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != want {
			t.Fatalf("session %s has %d messages, want %d", id, len(msgs), want)
		}
		checkSeqs(t, msgs)
	}
	e.Check(t, st)
}

func checkSeqs(t *testing.T, msgs []*loom.Message) {
	t.Helper()
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("seq gap at %d: %d", i, m.Seq)
		}
	}
}

// LockHeldByAnotherProcess: a lock another live process holds is
// refused naming that process; once it is killed, the lock is taken
// over.
func LockHeldByAnotherProcess(t *testing.T, e Engine, db string) {
	id := loom.NewID()
	holder := ChildCmd("hold", db, id)
	out, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("holder said %q", line)
	}
	st := Must(e.Open(context.Background(), db))(t)
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
	if lease.Lock().PID != os.Getpid() {
		t.Fatalf("lease pid = %d", lease.Lock().PID)
	}
	lease.Release(context.Background())
}

// KilledWhileAppending: a writer killed mid-loop leaves every message it
// committed and nothing partial; its lock is taken over and writing
// goes on.
func KilledWhileAppending(t *testing.T, e Engine, db string) {
	id := loom.NewID()
	tag := "loomchild_" + strconv.Itoa(os.Getpid())
	childDB := db
	if e.Tag != nil {
		childDB = e.Tag(db, tag)
	}
	w := ChildCmd("loop", childDB, id)
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
	ctx := context.Background()
	st := Must(e.Open(ctx, db))(t)
	if e.Settle != nil {
		e.Settle(t, st, tag)
	}
	e.Check(t, st)
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
	checkSeqs(t, msgs)
	// The dead writer's lock is taken over and writing continues.
	lease, err := st.Lock(ctx, id)
	if err != nil {
		t.Fatalf("take over after kill: %v", err)
	}
	defer lease.Release(ctx)
	if err := st.Append(ctx, s, Prompt("after the crash")); err != nil {
		t.Fatal(err)
	}
	hits, err := st.Search(ctx, loom.SearchQuery{Text: "crash"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search after crash = %v, %v", hits, err)
	}
}
