package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Where a session came from and the branch it was on survive every way
// a session is written; records of imported source files are kept per
// user and replaced per path.
func testImportSources(t *testing.T, open Opener) {
	st := open(t)
	at := time.Date(2025, 9, 3, 0, 47, 19, 0, time.UTC)
	src := &loom.Source{Tool: "claude-code", Version: "2.1.39", Path: "/home/a/.claude/projects/x/s.jsonl"}
	imp := newSession("alice", "claude-code:s")
	imp.GitBranch, imp.Source = "main", src
	imp.CreatedAt, imp.UpdatedAt = at, at
	m := text(loom.RoleUser, "imported prompt")
	m.ID, m.Seq, m.CreatedAt, m.Parts[0].ID = "u1", 1, at, "u1/0"
	if err := st.Import(ctx(t), []*loom.SessionData{{Session: imp, Messages: []*loom.Message{m}}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session(ctx(t), imp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.GitBranch != "main" || got.Source == nil || *got.Source != *src {
		t.Fatalf("imported session branch %q source %+v, want main %+v", got.GitBranch, got.Source, src)
	}
	// An imported session that grows is as recent as its source's
	// newest message, not as the import; completing one of its parts
	// leaves its time alone.
	later := at.Add(90 * time.Minute)
	reply := &loom.Message{ID: "a1", Role: loom.RoleAssistant, CreatedAt: later, Parts: []loom.Part{
		{ID: "a1/0", Type: loom.PartTool, CallID: "c1", Name: "Bash", Status: loom.ToolError, Error: "no result"},
	}}
	mustAppend(t, st, got, reply)
	if !got.UpdatedAt.Equal(later) {
		t.Errorf("the grown import's updated_at is %s, want its newest message's %s", got.UpdatedAt, later)
	}
	if err := st.UpdatePart(ctx(t), imp.ID, 2, loom.Part{ID: "a1/0", Type: loom.PartTool, CallID: "c1", Name: "Bash", Status: loom.ToolCompleted, Output: []byte(`"ok"`)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Session(ctx(t), imp.ID); !got.UpdatedAt.Equal(later) {
		t.Errorf("after a part's update the import's updated_at is %s, want %s", got.UpdatedAt, later)
	}
	// A fork is loom's own: it keeps the branch, not the source.
	f, err := st.Fork(ctx(t), imp.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.GitBranch != "main" || f.Source != nil {
		t.Fatalf("fork branch %q source %+v, want main and none", f.GitBranch, f.Source)
	}
	own := newSession("alice", "cli:own")
	own.GitBranch = "feature/x"
	mustAppend(t, st, own, text(loom.RoleUser, "hi"))
	if got, _ := st.Session(ctx(t), own.ID); got.GitBranch != "feature/x" || got.Source != nil {
		t.Fatalf("appended session branch %q source %+v", got.GitBranch, got.Source)
	}

	mtime := time.Date(2025, 9, 3, 1, 2, 3, 456789123, time.UTC)
	recs := []loom.ImportedFile{
		{UserID: "alice", Path: "/p/a.jsonl", Tool: "claude-code", Bundle: "/p/a.jsonl", Size: 10, ModTime: mtime, SourceID: "a", SessionID: imp.ID},
		{UserID: "alice", Path: "/p/a/subagents/x.jsonl", Tool: "claude-code", Bundle: "/p/a.jsonl", Size: 5, ModTime: mtime},
		{UserID: "alice", Path: "/c/r.jsonl", Tool: "codex", Bundle: "/c/r.jsonl", Size: 7, ModTime: mtime},
		{UserID: "bob", Path: "/p/a.jsonl", Tool: "claude-code", Bundle: "/p/a.jsonl", Size: 99, ModTime: mtime},
	}
	if err := st.RecordImportedFiles(ctx(t), recs); err != nil {
		t.Fatal(err)
	}
	files, err := st.ImportedFiles(ctx(t), "alice", "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "/p/a.jsonl" || files[0].Size != 10 || !files[0].ModTime.Equal(mtime) ||
		files[0].SessionID != imp.ID || files[0].SourceID != "a" || files[0].ImportedAt.IsZero() {
		t.Fatalf("alice's claude-code records = %+v", files)
	}
	if all, _ := st.ImportedFiles(ctx(t), "alice", ""); len(all) != 3 {
		t.Fatalf("alice's records of every tool = %d, want 3", len(all))
	}
	// Recording a path again replaces its record.
	recs[0].Size = 20
	if err := st.RecordImportedFiles(ctx(t), recs[:1]); err != nil {
		t.Fatal(err)
	}
	files, _ = st.ImportedFiles(ctx(t), "alice", "claude-code")
	if len(files) != 2 || files[0].Size != 20 {
		t.Fatalf("after re-recording: %+v", files)
	}
	if bob, _ := st.ImportedFiles(ctx(t), "bob", ""); len(bob) != 1 || bob[0].Size != 99 {
		t.Fatalf("bob's records = %+v", bob)
	}
	wantCode(t, st.RecordImportedFiles(ctx(t), []loom.ImportedFile{{UserID: "alice", Path: "/x"}}), loom.EINVALID)
}

// testUpdateUsage: a message's usage is replaced and the session's
// totals move by the difference, as an imported reply that its tool was
// still writing gets its final usage; a message the session does not
// store is not found, and a locked session refuses it.
func testUpdateUsage(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	reply := text(loom.RoleAssistant, "partial")
	reply.Usage = loom.Usage{InputTokens: 10, OutputTokens: 1, CostUSD: 0.01, APICalls: 1}
	other := text(loom.RoleAssistant, "earlier")
	other.Usage = loom.Usage{InputTokens: 100, OutputTokens: 50, CostUSD: 0.5, APICalls: 1}
	mustAppend(t, st, s, text(loom.RoleUser, "q"), other, reply)
	final := loom.Usage{InputTokens: 10, OutputTokens: 441, CacheReadTokens: 7, CostUSD: 0.25, APICalls: 1}
	if err := st.UpdateUsage(ctx(t), s.ID, 3, final); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Session(ctx(t), s.ID)
	want := other.Usage
	want.Add(final)
	if got.Usage != want {
		t.Errorf("session usage %+v, want %+v", got.Usage, want)
	}
	if msgs := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 1}); msgs[0].Usage != final || msgs[0].Text() != "partial" {
		t.Errorf("message usage %+v (%q), want %+v", msgs[0].Usage, msgs[0].Text(), final)
	}
	wantCode(t, st.UpdateUsage(ctx(t), s.ID, 9, final), loom.ENOTFOUND)
	wantCode(t, st.UpdateUsage(ctx(t), loom.NewID(), 1, final), loom.ENOTFOUND)
	// A fork reads its parent's messages; their usage is the parent's.
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, st.UpdateUsage(ctx(t), f.ID, 3, final), loom.ENOTFOUND)
	lease, err := st.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())
	other2 := open(t)
	wantCode(t, other2.UpdateUsage(ctx(t), s.ID, 3, final), loom.ELOCKED)
}

// Importers of one source file take turns (loom.SourceLocker): a second
// handle gets ELOCKED for the same user and path until the first
// releases it; another path, or another user's, is free; a source lock
// is no session's lock.
func testSourceLocks(t *testing.T, open Opener) {
	a, b := open(t), open(t)
	la, lb := loom.SourceLocker(a), loom.SourceLocker(b)
	held, err := la.LockSource(ctx(t), "alice", "/home/alice/.claude/projects/p/s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, err = lb.LockSource(ctx(t), "alice", "/home/alice/.claude/projects/p/s.jsonl")
	wantCode(t, err, loom.ELOCKED)
	for _, other := range []struct{ user, path string }{
		{"alice", "/home/alice/.claude/projects/p/t.jsonl"},
		{"bob", "/home/alice/.claude/projects/p/s.jsonl"},
	} {
		l, err := lb.LockSource(ctx(t), other.user, other.path)
		if err != nil {
			t.Fatalf("lock of %s's %s: %v", other.user, other.path, err)
		}
		l.Release(ctx(t))
	}
	s := newSession("alice", "cli:beside")
	mustAppend(t, b, s, text(loom.RoleUser, "a session is not a source"))
	if err := held.Release(ctx(t)); err != nil {
		t.Fatal(err)
	}
	l, err := lb.LockSource(ctx(t), "alice", "/home/alice/.claude/projects/p/s.jsonl")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l.Release(ctx(t))
}
