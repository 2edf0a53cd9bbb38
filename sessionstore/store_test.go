package sessionstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// fakeEngine is an Engine without a database: it records what the Store
// asked of it. Its transaction (fakeWrites) answers ForkSource and
// RecordFiles; any other step panics, so a test fails when a write
// reaches the engine where it should not.
type fakeEngine struct {
	calls    []string
	writeErr error
	tx       *fakeWrites
	// lastTurn, when set, makes the engine read turns outside a
	// transaction (repairReader): it hands r the messages.
	lastTurn []*loom.Message
}

func (e *fakeEngine) Begin(ctx context.Context) (Tx, error) {
	e.calls = append(e.calls, "write")
	if e.writeErr != nil {
		return Tx{}, e.writeErr
	}
	e.tx.ended = append(e.tx.ended, errOpen)
	return Tx{ImportSteps: e.tx, ForkSteps: e.tx, Ender: e.tx}, nil
}

func (e *fakeEngine) BeginPut(context.Context) (PutWrites, error) {
	e.calls = append(e.calls, "put")
	return nil, e.writeErr
}

func (e *fakeEngine) Now() time.Time          { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
func (e *fakeEngine) Holder() Holder          { return Holder{Owner: "me"} }
func (e *fakeEngine) LeaseTTL() time.Duration { return time.Minute }

func (e *fakeEngine) BeginLock(context.Context) (LockWrites, error) {
	e.calls = append(e.calls, "lock")
	return nil, e.writeErr
}

func (e *fakeEngine) InsertToken(_ context.Context, t *loom.Token, hash string) error {
	e.calls = append(e.calls, "insert token")
	return e.writeErr
}

func (e *fakeEngine) MarkTokenRevoked(context.Context, string, time.Time) (bool, error) {
	e.calls = append(e.calls, "revoke token")
	return false, e.writeErr
}

func (e *fakeEngine) InsertShare(context.Context, *loom.Share, []byte, time.Time) error {
	e.calls = append(e.calls, "insert share")
	return e.writeErr
}

func (e *fakeEngine) MarkShareRevoked(context.Context, string, string, time.Time) (bool, error) {
	e.calls = append(e.calls, "revoke share")
	return false, e.writeErr
}

func (e *fakeEngine) ExtendLock(context.Context, string, time.Time) (bool, error) { return true, nil }
func (e *fakeEngine) DropLock(context.Context, string) error                      { return nil }

// fakeWrites is the fake engine's transaction.
type fakeWrites struct {
	ImportSteps // nil: any step not below panics
	ForkSteps   // nil
	source      *loom.Session
	files       []loom.ImportedFile
	imported    []*loom.SessionData
	// ended has, for each transaction begun, the error it ended with
	// (errOpen until it ends).
	ended []error
}

var errOpen = errors.New("still open")

func (w *fakeWrites) End(err error) error {
	w.ended[len(w.ended)-1] = err
	return err
}

func (w *fakeWrites) ImportRows(ctx context.Context, data []*loom.SessionData) error {
	w.imported = append(w.imported, data...)
	return nil
}

func (w *fakeWrites) ForkSource(ctx context.Context, id string) (*loom.Session, error) {
	if w.source == nil || w.source.ID != id {
		return nil, loom.Errorf(loom.ENOTFOUND, "no session %s", id)
	}
	return w.source, nil
}

func (w *fakeWrites) RecordFiles(ctx context.Context, files []loom.ImportedFile) error {
	w.files = append(w.files, files...)
	return nil
}

// repairing is a fake engine that reads a turn outside transactions.
type repairing struct{ *fakeEngine }

func (e repairing) LastTurn(ctx context.Context, id string, r *Repair) error {
	e.calls = append(e.calls, "read last turn")
	for _, m := range slices.Backward(e.lastTurn) {
		if !r.Add(m) {
			break
		}
	}
	return nil
}

// preparing and watching are fake engines that prepare forks and hear
// of imports.
type (
	preparing struct{ *fakeEngine }
	watching  struct {
		*fakeEngine
		imported *[]int
	}
)

func (e preparing) PrepareFork(context.Context) { e.calls = append(e.calls, "prepare fork") }

func (e watching) Imported(_ context.Context, n int) { *e.imported = append(*e.imported, n) }

func newFake() *fakeEngine { return &fakeEngine{tx: &fakeWrites{}} }

func TestStoreChecksBeforeItWrites(t *testing.T) {
	e := newFake()
	st := New(e)
	ctx := t.Context()
	bad := &loom.Message{Role: "narrator", Parts: []loom.Part{{Type: loom.PartText, Text: "x"}}}
	if err := st.Append(ctx, &loom.Session{ID: loom.NewID(), UserID: "u"}, bad); loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("append of a bad message = %v, want EINVALID", err)
	}
	if err := st.UpdatePart(ctx, "s", 1, loom.Part{}); loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("update of a part without a type = %v, want EINVALID", err)
	}
	long := "two\nlines"
	if _, err := st.UpdateSession(ctx, "s", loom.SessionUpdate{Title: &long}); loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("a title of two lines = %v, want EINVALID", err)
	}
	if _, err := st.Prune(ctx, loom.PruneOptions{UserID: "u", OlderThan: -time.Hour}); loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("prune of a negative age = %v, want EINVALID", err)
	}
	if err := st.RecordImportedFiles(ctx, []loom.ImportedFile{{UserID: "u"}}); loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("a file record without a path = %v, want EINVALID", err)
	}
	if err := st.Import(ctx, nil); err != nil {
		t.Errorf("import of nothing = %v", err)
	}
	if len(e.calls) > 0 {
		t.Fatalf("the engine was asked %v; nothing should reach it", e.calls)
	}
}

func TestStoreRepairReadsFirst(t *testing.T) {
	finished := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartTool, CallID: "c", Name: "shell", Status: loom.ToolCompleted}}}
	e := newFake()
	st := New(repairing{e})
	e.lastTurn = []*loom.Message{{Role: loom.RoleUser}, finished}
	if n, err := st.RepairInterrupted(t.Context(), "s"); n != 0 || err != nil {
		t.Fatalf("repair of a finished turn = %d, %v", n, err)
	}
	if !slices.Equal(e.calls, []string{"read last turn"}) {
		t.Fatalf("calls = %v: a finished turn needs no write transaction", e.calls)
	}
	// An engine that does not read outside transactions goes straight
	// to one, where the rule reads the turn again.
	plain := newFake()
	plain.writeErr = errors.New("no database here")
	if _, err := New(plain).RepairInterrupted(t.Context(), "s"); !errors.Is(err, plain.writeErr) {
		t.Fatalf("repair = %v, want the write's error", err)
	}
	if !slices.Equal(plain.calls, []string{"write"}) {
		t.Fatalf("calls = %v", plain.calls)
	}
}

func TestStoreForkPreparesThenReadsItsSource(t *testing.T) {
	e := newFake()
	st := New(preparing{e})
	_, err := st.Fork(t.Context(), "missing", loom.ForkOptions{})
	if loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("fork of a missing session = %v, want ENOTFOUND", err)
	}
	if !slices.Equal(e.calls, []string{"prepare fork", "write"}) {
		t.Fatalf("calls = %v, want the fork prepared before its transaction", e.calls)
	}
	if len(e.tx.ended) != 1 || loom.ErrorCode(e.tx.ended[0]) != loom.ENOTFOUND {
		t.Fatalf("transactions ended with %v, want one rolled back with ENOTFOUND", e.tx.ended)
	}
	e.calls = nil
	e.writeErr = errors.New("no database here")
	if _, err := New(preparing{e}).Rewind(t.Context(), "s", loom.RewindOptions{Turn: 1}); !errors.Is(err, e.writeErr) {
		t.Fatalf("rewind = %v, want the write's error", err)
	}
	if !slices.Equal(e.calls, []string{"prepare fork", "write"}) {
		t.Fatalf("calls = %v, want a rewind prepared as a fork", e.calls)
	}
}

func TestStoreImportHeardOnlyOnceCommitted(t *testing.T) {
	var heard []int
	e := newFake()
	e.writeErr = errors.New("disk full")
	st := New(watching{e, &heard})
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	data := []*loom.SessionData{{Session: &loom.Session{ID: loom.NewID(), UserID: "u", Title: "t", CreatedAt: at, UpdatedAt: at}}}
	if err := st.Import(t.Context(), data); !errors.Is(err, e.writeErr) {
		t.Fatalf("import = %v, want the write's error", err)
	}
	if len(heard) != 0 {
		t.Fatalf("the engine heard of an import that failed: %v", heard)
	}
	e.writeErr = nil
	if err := st.Import(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	if len(e.tx.imported) != 1 || !slices.Equal(heard, []int{1}) {
		t.Fatalf("imported %d sessions, heard %v; want 1 and [1]", len(e.tx.imported), heard)
	}
	if last := e.tx.ended[len(e.tx.ended)-1]; last != nil {
		t.Fatalf("the import's transaction ended with %v, want committed", last)
	}
	// The file records of an import go through the transaction.
	files := []loom.ImportedFile{{UserID: "u", Path: "/a.jsonl", Tool: "codex", Bundle: "/a.jsonl"}}
	if err := st.RecordImportedFiles(t.Context(), files); err != nil {
		t.Fatal(err)
	}
	if len(e.tx.files) != 1 || e.tx.files[0].Path != "/a.jsonl" {
		t.Fatalf("files recorded = %+v", e.tx.files)
	}
	if !slices.Equal(heard, []int{1}) {
		t.Fatalf("a record of files is no import of sessions: heard %v", heard)
	}
}

func TestStoreEndsATransactionAPanicLeaves(t *testing.T) {
	e := newFake()
	st := New(e)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic: the fake transaction has no Session step")
			}
		}()
		st.Restore(t.Context(), "s") // the rule's first step is not the fake's
	}()
	if len(e.tx.ended) != 1 || !errors.Is(e.tx.ended[0], errAborted) {
		t.Fatalf("transactions ended with %v, want the one rolled back", e.tx.ended)
	}
}

func TestStorePutSaysWhatFailed(t *testing.T) {
	e := newFake()
	e.writeErr = errors.New("database is locked")
	_, err := New(e).PutSyncRecords(t.Context(), "u", []loom.SyncRecord{{Host: "h", Index: 1}})
	if !errors.Is(err, e.writeErr) || !strings.HasPrefix(err.Error(), "put sync records: ") {
		t.Fatalf("put = %v, want the begin's error, said as a put's", err)
	}
}

func TestStoreLockTakesTheRowInATransaction(t *testing.T) {
	e := newFake()
	st := New(e)
	if _, err := st.Lock(t.Context(), ""); loom.ErrorCode(err) != loom.EINVALID || len(e.calls) > 0 {
		t.Fatalf("lock of no session = %v (calls %v), want EINVALID before the engine", err, e.calls)
	}
	e.writeErr = loom.Errorf(loom.ELOCKED, "held")
	lease, err := st.LockSource(t.Context(), "u", "/a.jsonl")
	if lease != nil || loom.ErrorCode(err) != loom.ELOCKED || !slices.Equal(e.calls, []string{"lock"}) {
		t.Fatalf("lock = %v, %v (calls %v), want the transaction's ELOCKED and no lease", lease, err, e.calls)
	}
}

func TestStoreGrantsCheckThenWrite(t *testing.T) {
	e := newFake()
	st := New(e)
	ctx := t.Context()
	if _, _, err := st.CreateToken(ctx, "", "laptop", 0); loom.ErrorCode(err) != loom.EINVALID || len(e.calls) > 0 {
		t.Fatalf("a token without a user = %v (calls %v), want EINVALID before the engine", err, e.calls)
	}
	tok, secret, err := st.CreateScopedToken(ctx, "u", "laptop", loom.ScopeFull, time.Hour)
	if err != nil || tok.UserID != "u" || secret == "" || !slices.Equal(e.calls, []string{"insert token"}) {
		t.Fatalf("token = %+v, %q, %v (calls %v)", tok, secret, err, e.calls)
	}
	if err := st.RevokeToken(ctx, "nope"); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("revoke of an unknown token = %v, want ENOTFOUND", err)
	}
	if err := st.RevokeShare(ctx, "u", "nope"); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("revoke of an unknown share = %v, want ENOTFOUND", err)
	}
	e.calls = nil
	if _, err := st.CreateShare(ctx, "u", []byte("sealed"), e.Now().Add(-time.Hour)); loom.ErrorCode(err) != loom.EINVALID || len(e.calls) > 0 {
		t.Fatalf("a share expired already = %v (calls %v), want EINVALID before the engine", err, e.calls)
	}
}

func (w *fakeWrites) RecordCalls(ctx context.Context, calls []loom.CountedCall) error { return nil }
