package conformance

import (
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// testImportWrite: what an import read from a batch of source files
// (new sessions, messages appended to sessions imported before, parts,
// usage and titles set) is written with the records of those files in
// one transaction: all of it, or, when any of it fails, none of it, so
// that a file is never recorded as read without what it held.
func testImportWrite(t *testing.T, open Opener) {
	k := newImportWriteKit(t, open(t))
	importWriteFails(t, k)
	importWriteWhole(t, k)
}

// importWriteKit is testImportWrite's store, an imported session (old,
// cur as read back) whose file is recorded, and how to make messages,
// sessions and records of files and to read the records back.
type importWriteKit struct {
	st       loom.Store
	a        loom.ImportApplier
	msg      func(id, role, s string, k int) *loom.Message
	imported func(key string, msgs ...*loom.Message) *loom.SessionData
	rec      func(path string, size int64) loom.ImportedFile
	record   func(path string) *loom.ImportedFile
	old      *loom.SessionData
	cur      *loom.Session
}

func newImportWriteKit(t *testing.T, st loom.Engine) *importWriteKit {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	msg := func(id, role, s string, k int) *loom.Message {
		m := text(role, s)
		m.ID, m.CreatedAt, m.Parts[0].ID = id, at.Add(time.Duration(k)*time.Minute), id+"/0"
		return m
	}
	imported := func(key string, msgs ...*loom.Message) *loom.SessionData {
		x := newSession("alice", key)
		x.Source = &loom.Source{Tool: "claude-code", Path: "/p/" + key}
		x.CreatedAt, x.UpdatedAt = at, at
		for i, m := range msgs {
			m.Seq = int64(i + 1)
		}
		return &loom.SessionData{Session: x, Messages: msgs}
	}
	old := imported("claude-code:old", msg("u1", loom.RoleUser, "first prompt", 0), msg("a1", loom.RoleAssistant, "first reply", 1))
	old.Messages[1].Parts = append(old.Messages[1].Parts, loom.Part{ID: "a1/1", Type: loom.PartTool, CallID: "c1", Name: "Bash", Status: loom.ToolError, Error: "no result"})
	old.Messages[1].Usage = loom.Usage{InputTokens: 10, OutputTokens: 1, APICalls: 1}
	old.Session.Usage = old.Messages[1].Usage
	if err := st.Import(ctx(t), []*loom.SessionData{old}); err != nil {
		t.Fatal(err)
	}
	mtime := at.Add(time.Hour)
	rec := func(path string, size int64) loom.ImportedFile {
		return loom.ImportedFile{UserID: "alice", Path: path, Tool: "claude-code", Bundle: path, Size: size, ModTime: mtime}
	}
	record := func(path string) *loom.ImportedFile {
		files, err := st.ImportedFiles(ctx(t), "alice", "claude-code")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Path == path {
				return &f
			}
		}
		return nil
	}
	if err := st.RecordImportedFiles(ctx(t), []loom.ImportedFile{rec("/p/old", 100)}); err != nil {
		t.Fatal(err)
	}
	cur, err := st.Session(ctx(t), old.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	return &importWriteKit{st: st, a: st, msg: msg, imported: imported, rec: rec, record: record, old: old, cur: cur}
}

func importWriteFails(t *testing.T, k *importWriteKit) {
	st, a, msg, imported, rec, record, old, cur := k.st, k.a, k.msg, k.imported, k.rec, k.record, k.old, k.cur
	// A batch that fails anywhere writes nothing: not the new session,
	// not the append, not the records.
	fresh := imported("claude-code:new", msg("n1", loom.RoleUser, "new prompt", 5))
	bad := &loom.ImportWrite{
		Sessions: []*loom.SessionData{fresh},
		Changes: []loom.ImportChange{
			{Session: cur, Messages: []*loom.Message{msg("u2", loom.RoleUser, "second prompt", 2)}},
			{SessionID: old.Session.ID, Seq: 99, Usage: &loom.Usage{OutputTokens: 5}},
		},
		Files: []loom.ImportedFile{rec("/p/old", 200), rec("/p/new", 50)},
	}
	wantCode(t, a.ApplyImport(ctx(t), bad), loom.ENOTFOUND)
	if _, err := st.Session(ctx(t), fresh.Session.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("a failed batch's new session: %v, want not found", err)
	}
	if got := mustMessages(t, st, old.Session.ID, loom.MessageQuery{}); len(got) != 2 {
		t.Fatalf("a failed batch appended: %d messages, want 2", len(got))
	}
	if r := record("/p/old"); r == nil || r.Size != 100 {
		t.Fatalf("a failed batch recorded its file: %+v, want size 100", r)
	}
	if r := record("/p/new"); r != nil {
		t.Fatalf("a failed batch recorded a file: %+v", r)
	}
	// A new session whose key is taken fails the batch the same way.
	taken := imported("claude-code:old", msg("x1", loom.RoleUser, "x", 0))
	wantCode(t, a.ApplyImport(ctx(t), &loom.ImportWrite{Sessions: []*loom.SessionData{taken}, Files: []loom.ImportedFile{rec("/p/new", 50)}}), loom.ECONFLICT)
	if r := record("/p/new"); r != nil {
		t.Fatalf("a conflicting batch recorded a file: %+v", r)
	}
}

func importWriteWhole(t *testing.T, k *importWriteKit) {
	st, a, msg, imported, rec, record, old, cur := k.st, k.a, k.msg, k.imported, k.rec, k.record, k.old, k.cur
	// A good batch writes all of it.
	title := "grown title"
	fresh := imported("claude-code:new", msg("n1", loom.RoleUser, "new prompt", 5))
	done := loom.Part{ID: "a1/1", Type: loom.PartTool, CallID: "c1", Name: "Bash", Status: loom.ToolCompleted, Output: []byte(`"ok"`)}
	final := loom.Usage{InputTokens: 10, OutputTokens: 7, APICalls: 1}
	good := &loom.ImportWrite{
		Sessions: []*loom.SessionData{fresh},
		Changes: []loom.ImportChange{
			{SessionID: old.Session.ID, Seq: 2, Part: &done},
			{SessionID: old.Session.ID, Seq: 2, Usage: &final},
			{Session: cur, Messages: []*loom.Message{msg("u2", loom.RoleUser, "second prompt", 2), msg("a2", loom.RoleAssistant, "second reply", 3)}},
			{SessionID: old.Session.ID, Title: &title},
		},
		Files: []loom.ImportedFile{rec("/p/old", 200), rec("/p/new", 50)},
	}
	if err := a.ApplyImport(ctx(t), good); err != nil {
		t.Fatal(err)
	}
	if cur.MessageCount != 4 {
		t.Errorf("the appended-to session is refreshed with %d messages, want 4", cur.MessageCount)
	}
	got := mustMessages(t, st, old.Session.ID, loom.MessageQuery{})
	if len(got) != 4 || got[2].ID != "u2" || got[3].ID != "a2" {
		t.Fatalf("after the batch: %d messages", len(got))
	}
	if len(got[1].Parts) != 2 || got[1].Parts[1].Status != loom.ToolCompleted || got[1].Usage.OutputTokens != 7 {
		t.Fatalf("message 2 after the batch: parts %+v usage %+v", got[1].Parts, got[1].Usage)
	}
	x, err := st.Session(ctx(t), old.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if x.Title != title || x.MessageCount != 4 || x.TurnCount != 2 || x.Usage.OutputTokens != 7 {
		t.Fatalf("session after the batch: title %q, %d messages, %d turns, usage %+v", x.Title, x.MessageCount, x.TurnCount, x.Usage)
	}
	if n := mustMessages(t, st, fresh.Session.ID, loom.MessageQuery{}); len(n) != 1 || n[0].ID != "n1" {
		t.Fatalf("the new session holds %d messages", len(n))
	}
	if r := record("/p/old"); r == nil || r.Size != 200 {
		t.Fatalf("record of the grown file: %+v, want size 200", r)
	}
	if r := record("/p/new"); r == nil || r.Size != 50 {
		t.Fatalf("record of the new file: %+v, want size 50", r)
	}
	hits, err := st.Search(ctx(t), loom.SearchQuery{UserID: "alice", Text: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 {
		t.Error("an appended message is not found by search")
	}
}
