package conformance

import (
	"bytes"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// The originals of imported files are kept per user and path, in chunks
// by offset without a gap: a chunk at 0 replaces the file's, any other
// must follow the kept bytes; they read back in order, a redaction
// rewrites a chunk in place, and deleting a session's originals (or
// those of sessions the store no longer holds) removes them.
func testOriginals(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "claude-code:s")
	s.Source = &loom.Source{Tool: "claude-code"}
	mustAppend(t, st, s, text(loom.RoleUser, "hi"))
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	chunk := func(path string, off int64, b string) loom.OriginalChunk {
		return loom.OriginalChunk{UserID: "alice", Tool: "claude-code", Path: path, Bundle: "/p/a.jsonl", SessionID: s.ID,
			Offset: off, Size: int64(len(b)), Data: []byte(b), Tail: "t" + b, ModTime: at}
	}
	for _, c := range []loom.OriginalChunk{chunk("/p/a.jsonl", 0, "one\n"), chunk("/p/a.jsonl", 4, "two\n"), chunk("/p/a/sub.jsonl", 0, "sub\n")} {
		if err := st.KeepOriginal(ctx(t), c); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, st.KeepOriginal(ctx(t), chunk("/p/a.jsonl", 3, "gap")), loom.EINVALID)
	bob := chunk("/p/a.jsonl", 0, "bob's\n")
	bob.UserID, bob.SessionID = "bob", ""
	if err := st.KeepOriginal(ctx(t), bob); err != nil {
		t.Fatal(err)
	}
	files, err := st.OriginalFiles(ctx(t), "alice", "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "/p/a.jsonl" || files[0].Size != 8 || files[0].Chunks != 2 || files[0].Stored != 8 ||
		files[0].Tail != "ttwo\n" || !files[0].ModTime.Equal(at) || files[0].SessionID != s.ID {
		t.Fatalf("kept files %+v", files)
	}
	read := func(user, path string) string {
		var out bytes.Buffer
		if err := st.OriginalChunks(ctx(t), user, path, func(c loom.OriginalChunk) error {
			out.Write(c.Data)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := read("alice", "/p/a.jsonl"); got != "one\ntwo\n" {
		t.Fatalf("read back %q", got)
	}
	if got := read("bob", "/p/a.jsonl"); got != "bob's\n" {
		t.Fatalf("bob's read back %q", got)
	}
	// A redaction keeps the chunk's place and size in the file.
	if err := st.RewriteOriginal(ctx(t), "alice", "/p/a.jsonl", 4, []byte("[REDACTED]\n")); err != nil {
		t.Fatal(err)
	}
	wantCode(t, st.RewriteOriginal(ctx(t), "alice", "/p/a.jsonl", 5, []byte("x")), loom.ENOTFOUND)
	if got := read("alice", "/p/a.jsonl"); got != "one\n[REDACTED]\n" {
		t.Fatalf("redacted read back %q", got)
	}
	if err := st.KeepOriginal(ctx(t), chunk("/p/a.jsonl", 8, "three\n")); err != nil {
		t.Fatalf("a chunk after a redacted one: %v", err)
	}
	// Rewritten: kept again from 0.
	if err := st.KeepOriginal(ctx(t), chunk("/p/a.jsonl", 0, "new\n")); err != nil {
		t.Fatal(err)
	}
	if got := read("alice", "/p/a.jsonl"); got != "new\n" {
		t.Fatalf("rewritten read back %q", got)
	}
	// Deleting the session's originals leaves bob's.
	n, err := st.DeleteOriginals(ctx(t), "alice", []string{s.ID})
	if err != nil || n != 2 {
		t.Fatalf("deleted %d chunks, %v; want 2", n, err)
	}
	if files, _ := st.OriginalFiles(ctx(t), "alice", ""); len(files) != 0 {
		t.Fatalf("left %+v", files)
	}
	if got := read("bob", "/p/a.jsonl"); got != "bob's\n" {
		t.Fatalf("bob's read back %q after alice's were deleted", got)
	}
	// Those of a session the store no longer holds go with any delete.
	gone := chunk("/p/b.jsonl", 0, "b\n")
	gone.SessionID = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c0d"
	if err := st.KeepOriginal(ctx(t), gone); err != nil {
		t.Fatal(err)
	}
	if n, err := st.DeleteOriginals(ctx(t), "alice", nil); err != nil || n != 1 {
		t.Fatalf("deleted %d chunks of a purged session, %v; want 1", n, err)
	}
	originalsOfDatabase(t, st, st, at)
}

// originalsOfDatabase: the originals of a database of several sessions
// stay while one of its sessions does.
func originalsOfDatabase(t *testing.T, st loom.Store, k loom.OriginalsKeeper, at time.Time) {
	// A database of several sessions stays while one of them does.
	db := &loom.Session{UserID: "alice", Key: "opencode:ses_1", Source: &loom.Source{Tool: "opencode", Path: "/p/opencode.db"}}
	mustAppend(t, st, db, text(loom.RoleUser, "hi"))
	shared := loom.OriginalChunk{UserID: "alice", Tool: "opencode", Path: "/p/opencode.db", Bundle: "/p/opencode.db", Size: 2, Data: []byte("db"), Tail: "x", ModTime: at}
	if err := k.KeepOriginal(ctx(t), shared); err != nil {
		t.Fatal(err)
	}
	if n, err := k.DeleteOriginals(ctx(t), "alice", nil); err != nil || n != 0 {
		t.Fatalf("deleted %d chunks of a database whose session is there, %v", n, err)
	}
	if _, err := st.Delete(ctx(t), db.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if n, err := k.DeleteOriginals(ctx(t), "alice", nil); err != nil || n != 1 {
		t.Fatalf("deleted %d chunks of a database none of whose sessions is left, %v; want 1", n, err)
	}
}
