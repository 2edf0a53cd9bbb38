package opencode

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"

	"modernc.org/sqlite"
)

// uncommittedID is the session a writer has inserted and not committed.
const uncommittedID = "ses_5a0000000000UNCOMMITTED00"

// rollbackWriter turns the database at path to rollback-journal mode
// (journal_mode=DELETE, as a copy of opencode.db set so by hand or by
// another tool is) and opens a write transaction on it that inserts a
// session, a message and a part and is not committed. Its page cache is
// kept small and the transaction large, so that SQLite spills the
// uncommitted pages into the database file itself, as it does with a
// large transaction. The transaction is rolled back at the end of the
// test.
func rollbackWriter(t *testing.T, path string) *sql.Tx {
	t.Helper()
	db := openWriter(t, path, "DELETE")
	t.Cleanup(func() { db.Close() })
	// One connection: the page cache stays this small for the transaction.
	mustExec(t, db, "PRAGMA cache_size = 10")
	// Pages for the transaction to rewrite, committed first, so that what
	// it spills changes pages of the file without growing it.
	mustExec(t, db, "CREATE TABLE filler (b blob)")
	mustExec(t, db, "INSERT INTO filler SELECT zeroblob(4000) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) SELECT i FROM n)")
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	mustExec(t, tx, "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, ?, 'brave-otter', '/home/dev/code/loom', 'not committed', '1.2.4', 1762300000000, 1762300000000)", uncommittedID, project)
	mustExec(t, tx, "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_a50000000000UNCOMMITTED00', ?, 1762300000001, 1762300000001, '{\"role\":\"user\",\"time\":{\"created\":1762300000001}}')", uncommittedID)
	mustExec(t, tx, "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_a50000000000UNCOMMITTED00', 'msg_a50000000000UNCOMMITTED00', ?, 1762300000001, 1762300000001, '{\"type\":\"text\",\"text\":\"never committed\"}')", uncommittedID)
	mustExec(t, tx, "UPDATE filler SET b = randomblob(4000)")
	return tx
}

// readDBFile reads the database at path as a bundle of its own.
func readDBFile(path string) (*importer.Result, error) {
	return Format{}.Read(context.Background(), importer.Bundle{Files: []string{path}})
}

// A read never sees what a writer has not committed. While a writer of a
// rollback-journal database holds its transaction open with pages
// written into the file, the read waits for it and reports the database
// busy; a journal a dead writer left hot (the files copied mid-write
// stand for it) is reported too, not read past. The database and its
// journal are not touched.
func TestDBUncommitted(t *testing.T) {
	defer func(d time.Duration) { importer.SQLiteBusyTimeout = d }(importer.SQLiteBusyTimeout)
	importer.SQLiteBusyTimeout = 300 * time.Millisecond
	dir := t.TempDir()
	path := buildDB(t, dir, schemaLater)
	tx := rollbackWriter(t, path)
	if _, err := os.Stat(path + "-journal"); err != nil {
		t.Fatalf("the writer keeps no journal: %v", err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("the writer is in WAL mode")
	}

	// A dead writer: the database and its hot journal as it left them.
	crashed := filepath.Join(t.TempDir(), opencodeApp.db)
	for _, suffix := range []string{"", "-journal"} {
		raw := importertest.ReadBytes(t, path+suffix)
		importertest.WriteFile(t, crashed+suffix, raw, 0o644)
	}
	before := map[string][]byte{}
	for _, f := range []string{crashed, crashed + "-journal"} {
		before[f], _ = os.ReadFile(f)
	}

	for _, tc := range []struct {
		name, path, want string
	}{
		{"writer at work", path, "is being written; try again"},
		{"hot journal", crashed, "hot journal"},
	} {
		res, err := readDBFile(tc.path)
		if res != nil && slices.Contains(importertest.SourceIDs(res.Sessions), uncommittedID) {
			t.Errorf("%s: read the uncommitted session", tc.name)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: error %v, want one naming the file and saying %q", tc.name, err, tc.want)
		}
	}
	for f, b := range before {
		if after, _ := os.ReadFile(f); string(after) != string(b) {
			t.Errorf("reading changed %s", f)
		}
	}

	// Once the writer is done, the committed state is read whole.
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	res, err := readDBFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := importertest.SourceIDs(res.Sessions); slices.Contains(got, uncommittedID) || !slices.Contains(got, mainID) || len(got) != 3 {
		t.Errorf("after the rollback: sessions %v", got)
	}
}

// Through the importer: an import while the writer is at work imports
// nothing from the database and says why, with a failed file (so that
// the command exits non-zero and the next run reads it again); the
// import after the writer committed imports every session once, and the
// one after that finds nothing new.
func TestImportWhileWritten(t *testing.T) {
	defer func(d time.Duration) { importer.SQLiteBusyTimeout = d }(importer.SQLiteBusyTimeout)
	importer.SQLiteBusyTimeout = 300 * time.Millisecond
	dir := t.TempDir()
	path := buildDB(t, dir, schemaLater)
	st := importertest.Store(t)

	tx := rollbackWriter(t, path)
	tr := importertest.Import(t, st, Format{}, dir)
	if tr.FilesFailed != 1 || tr.SessionsNew != 0 || len(tr.Problems) != 1 || !strings.Contains(tr.Problems[0].Reason, "is being written; try again") {
		t.Errorf("import during the write: %d failed, %d new, problems %v", tr.FilesFailed, tr.SessionsNew, tr.Problems)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if tr := importertest.Import(t, st, Format{}, dir); tr.FilesFailed != 0 || tr.SessionsNew != 4 {
		t.Errorf("import after the commit: %d failed, %d new, problems %v", tr.FilesFailed, tr.SessionsNew, tr.Problems)
	}
	if tr := importertest.Import(t, st, Format{}, dir); tr.FilesRead != 0 || tr.SessionsNew != 0 {
		t.Errorf("import again: %d read, %d new", tr.FilesRead, tr.SessionsNew)
	}
	ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Surface: "opencode", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 4 {
		t.Errorf("%d sessions stored, want 4", len(ss))
	}
}

// A damaged opencode.db is an error of Read, never an empty result: the
// importer then reports the file as failed and reads it again next time,
// rather than recording it as read with nothing in it. A file without
// SQLite's header is not taken for a database; one with it is SQLite's
// error.
func TestDamagedDB(t *testing.T) {
	good := importertest.ReadBytes(t, buildDB(t, t.TempDir(), schemaV12))
	const page = 4096
	zeroed := func(from, to int) []byte {
		d := slices.Clone(good)
		clear(d[from:to])
		return d
	}
	for _, tc := range []struct {
		name string
		data []byte
		// headerless: the file does not start with SQLite's header.
		headerless bool
	}{
		{"empty", nil, true},
		{"zeros", make([]byte, len(good)), true},
		{"not a database", []byte("not a database"), true},
		{"header only", good[:100], false},
		{"first page", good[:page], false},
		{"cut in half", good[:len(good)/2], false},
		{"pages zeroed", zeroed(page, len(good)), false},
		{"schema damaged", zeroed(100, page), false},
	} {
		path := filepath.Join(t.TempDir(), opencodeApp.db)
		importertest.WriteFile(t, path, tc.data, 0o644)
		res, err := readDBFile(path)
		if err == nil {
			t.Errorf("%s: no error, %d sessions", tc.name, len(res.Sessions))
			continue
		}
		var sqlErr *sqlite.Error
		switch {
		case !strings.Contains(err.Error(), path):
			t.Errorf("%s: error %q does not name the file", tc.name, err)
		case tc.headerless && !strings.Contains(err.Error(), "is not a SQLite database"):
			t.Errorf("%s: error %q, want one saying it is not a SQLite database", tc.name, err)
		case !tc.headerless && !errors.As(err, &sqlErr):
			t.Errorf("%s: error %q, want SQLite's", tc.name, err)
		}
	}
}

// Dotfile managers and moved disks leave opencode's storage as symbolic
// links: a project's directory, a session's messages, a part file. The
// tree reads like a real one.
func TestTreeSymlinks(t *testing.T) {
	real := writeTree(t, map[string]string{
		"session/p/ses_l.json":     `{"id":"ses_l","title":"linked","directory":"/home/dev/code/linked","time":{"created":1748772000000,"updated":1748772060000}}`,
		"message/ses_l/msg_1.json": `{"id":"msg_1","role":"user","time":{"created":1748772001000}}`,
		"part/msg_1/prt_1.json":    `{"id":"prt_1","type":"text","text":"through a link"}`,
	})
	data := t.TempDir()
	storage := filepath.Join(data, storageDir)
	importertest.Symlink(t, filepath.Join(real, storageDir, "session", "p"), filepath.Join(storage, "session", "p"))
	importertest.Symlink(t, filepath.Join(real, storageDir, "message"), filepath.Join(storage, "message"))
	importertest.Symlink(t, filepath.Join(real, storageDir, "part", "msg_1", "prt_1.json"), filepath.Join(storage, "part", "msg_1", "prt_1.json"))
	importertest.Symlink(t, filepath.Join(real, "gone"), filepath.Join(storage, "session", "gone"))
	importertest.Symlink(t, filepath.Join(real, "gone.json"), filepath.Join(storage, "part", "msg_1", "prt_2.json"))

	bs, err := Format{}.Bundles(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	want := []importer.Bundle{{Files: []string{
		filepath.Join(storage, "session", "p", "ses_l.json"),
		filepath.Join(storage, "message", "ses_l", "msg_1.json"),
		filepath.Join(storage, "part", "msg_1", "prt_1.json"),
	}}}
	equal(t, "bundles", bs, want)
	if len(bs) != 1 {
		return
	}
	res, err := Format{}.Read(context.Background(), bs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 1 || len(res.Sessions[0].Messages) != 1 || res.Sessions[0].Messages[0].Text() != "through a link" {
		t.Errorf("read through links: %+v", res.Sessions)
	}
}
