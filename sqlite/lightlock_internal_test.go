package sqlite

import (
	"context"
	"testing"
)

// Lock rows are written with synchronous=NORMAL (lightly), and the
// writer's one connection is given back at FULL after each of them, so
// that the writes that follow, a batch of an import or a turn
// appended, are synced as before: after a source lock is taken, renewed,
// released, and after a take that fails because another handle holds it.
func TestLockWritesLeaveTheWriterSynced(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	other, err := Open(ctx, st.path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	synced := func(when string) {
		t.Helper()
		for _, s := range []*Store{st, other} {
			var level int
			if err := s.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&level); err != nil {
				t.Fatal(err)
			}
			if level != 2 {
				t.Fatalf("%s: the writer's synchronous is %d, want 2 (FULL)", when, level)
			}
		}
	}
	held := func() int {
		var n int
		if err := st.writer.QueryRowContext(ctx, `SELECT count(*) FROM locks WHERE session_id = ?`, sourceLockRow(t, "u", "/work/a.jsonl")).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	synced("opened")
	lease, err := st.LockSource(ctx, "u", "/work/a.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	synced("after the lock was taken")
	if held() != 1 {
		t.Fatal("the lock row is not there while the lock is held")
	}
	if _, err := (engine{st}).ExtendLock(ctx, sourceLockRow(t, "u", "/work/a.jsonl"), st.Now().Add(st.LeaseTTL)); err != nil {
		t.Fatal(err)
	}
	synced("after the lock was renewed")
	if _, err := other.LockSource(ctx, "u", "/work/a.jsonl"); err == nil {
		t.Fatal("another handle took a held lock")
	}
	synced("after another handle failed to take it")
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	synced("after the lock was released")
	if held() != 0 {
		t.Fatal("the lock row is still there after its release")
	}
}

// sourceLockRow is the session id of the lock row of a source file's
// lock, as the store names it.
func sourceLockRow(t *testing.T, userID, path string) string {
	t.Helper()
	var id string
	ctx := context.Background()
	st := openTemp(t)
	lease, err := st.LockSource(ctx, userID, path)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx)
	if err := st.writer.QueryRowContext(ctx, `SELECT session_id FROM locks`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
