package opencode

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// schemaV12 is opencode.db's first schema, as opencode 1.2 creates it
// (migration 20260127222353), without the tables the reader does not
// touch.
const schemaV12 = "CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text, `icon_url` text, `icon_color` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_initialized` integer, `sandboxes` text NOT NULL);\n" +
	"CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL, `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `share_url` text, `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text, `revert` text, `permission` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer, CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE);\n" +
	"CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL, CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE);\n" +
	"CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL, CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE);\n" +
	"CREATE TABLE `todo` (`session_id` text NOT NULL, `content` text NOT NULL, `status` text NOT NULL, `priority` text NOT NULL, `position` integer NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, CONSTRAINT `todo_pk` PRIMARY KEY(`session_id`, `position`));\n" +
	"CREATE INDEX `message_session_idx` ON `message` (`session_id`);\n" +
	"CREATE INDEX `part_message_idx` ON `part` (`message_id`);\n" +
	"CREATE INDEX `part_session_idx` ON `part` (`session_id`);\n" +
	"CREATE INDEX `session_project_idx` ON `session` (`project_id`);\n" +
	"CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);\n"

// schemaLater is the schema as later versions extend it: sessions gain
// a workspace, a path, an agent, a model, and usage totals; messages are
// indexed by time.
const schemaLater = schemaV12 +
	"ALTER TABLE `session` ADD `workspace_id` text;\n" +
	"ALTER TABLE `session` ADD `path` text;\n" +
	"ALTER TABLE `session` ADD `agent` text;\n" +
	"ALTER TABLE `session` ADD `model` text;\n" +
	"ALTER TABLE `session` ADD `cost` real DEFAULT 0 NOT NULL;\n" +
	"ALTER TABLE `session` ADD `tokens_input` integer DEFAULT 0 NOT NULL;\n" +
	"ALTER TABLE `session` ADD `tokens_output` integer DEFAULT 0 NOT NULL;\n" +
	"CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);\n" +
	"CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);\n"

// migratedAt is when the test's opencode moved the tree into its
// database: the time a part without a time of its own gets.
const migratedAt = 1762300000000

// buildDB creates dir/opencode.db with schema and the fixture tree's
// records, as opencode's move of the tree into the database does: ids
// from file names, the rest of each record as its data column. It
// leaves the database in WAL mode, closed.
func buildDB(t testing.TB, dir, schema string) string {
	t.Helper()
	path := filepath.Join(dir, opencodeApp.db)
	db := openWriter(t, path, "WAL")
	defer db.Close()
	mustExec(t, db, schema)
	storage := filepath.Join(fixture, storageDir)
	for _, f := range glob(t, storage, "project/*.json") {
		var p struct {
			Worktree string `json:"worktree"`
			VCS      string `json:"vcs"`
			Time     struct{ Created, Updated int64 }
		}
		readJSON(t, f, &p)
		mustExec(t, db, "INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) VALUES (?, ?, ?, ?, ?, '[]')",
			base(f), p.Worktree, p.VCS, p.Time.Created, p.Time.Updated)
	}
	for _, f := range glob(t, storage, "session/*/*.json") {
		var s struct {
			ParentID  *string `json:"parentID"`
			Slug      string  `json:"slug"`
			Directory string  `json:"directory"`
			Title     string  `json:"title"`
			Version   string  `json:"version"`
			Time      struct {
				Created, Updated int64
				Archived         *int64
			}
		}
		readJSON(t, f, &s)
		mustExec(t, db, "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated, time_archived) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			base(f), filepath.Base(filepath.Dir(f)), s.ParentID, s.Slug, s.Directory, s.Title, s.Version, s.Time.Created, s.Time.Updated, s.Time.Archived)
	}
	for _, f := range glob(t, storage, "message/*/*.json") {
		data, created := dataColumn(t, f, "id", "sessionID")
		mustExec(t, db, "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
			base(f), filepath.Base(filepath.Dir(f)), created, created, data)
	}
	for _, f := range glob(t, storage, "part/*/*.json") {
		data, created := dataColumn(t, f, "id", "messageID", "sessionID")
		var session string
		if err := db.QueryRow("SELECT session_id FROM message WHERE id = ?", filepath.Base(filepath.Dir(f))).Scan(&session); err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
			base(f), filepath.Base(filepath.Dir(f)), session, created, created, data)
	}
	return path
}

// openWriter opens path read-write in journalMode: "WAL" is the way
// opencode opens it, "DELETE" a rollback journal.
func openWriter(t testing.TB, path, journalMode string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode("+journalMode+")&_pragma=synchronous(NORMAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

func mustExec(t testing.TB, db interface {
	Exec(string, ...any) (sql.Result, error)
}, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func glob(t testing.TB, dir, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s in %s: %v", pattern, dir, err)
	}
	return files
}

func base(f string) string { return strings.TrimSuffix(filepath.Base(f), ".json") }

func readJSON(t testing.TB, f string, v any) {
	t.Helper()
	data := importertest.ReadBytes(t, f)
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", f, err)
	}
}

// dataColumn is a file's JSON without the keys that become columns, compact
// as JSON.stringify writes it, and its time.created or migratedAt.
func dataColumn(t testing.TB, f string, drop ...string) (string, int64) {
	t.Helper()
	var m map[string]json.RawMessage
	readJSON(t, f, &m)
	for _, k := range drop {
		delete(m, k)
	}
	var tm struct{ Created int64 }
	if raw, ok := m["time"]; ok {
		_ = json.Unmarshal(raw, &tm)
	}
	if tm.Created == 0 {
		tm.Created = migratedAt
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String()), tm.Created
}

// TestDBMalformed: a row whose data cannot be read is reported, the
// rest of the database still read.
func TestDBMalformed(t *testing.T) {
	defer func(n int64) { maxRecord = n }(maxRecord)
	dir := t.TempDir()
	path := buildDB(t, dir, schemaV12)
	db := openWriter(t, path, "WAL")
	mustExec(t, db, "UPDATE message SET data = '{\"role\": \"user\",' WHERE id = 'msg_a48fde72c000rEAjRWPLQCMK5k'")
	mustExec(t, db, "UPDATE part SET data = '{\"type\": 7}' WHERE id = 'prt_a2b90fe5e000O5UHWfCFWn05Gq'")
	mustExec(t, db, "UPDATE part SET data = '{\"type\":\"text\",\"text\":\""+strings.Repeat("é", 600)+"\"}' WHERE id = 'prt_a2b90fbd5000Crujke8PM3r804'")
	mustExec(t, db, "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_z', 'msg_gone', ?, 1, 1, '{}')", archID)
	mustExec(t, db, "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_loop1', ?, 'ses_loop2', '', '/', 'a', '1.2.0', 1, 1), ('ses_loop2', ?, 'ses_loop1', '', '/', 'b', '1.2.0', 2, 2)", project, project)
	db.Close()
	maxRecord = 1000 // 600 characters, but 1200 bytes
	a := readRoot(t, dir)
	equal(t, "problems", a.problems, []importer.Problem{
		{File: path, Reason: "part prt_a2b90fbd5000Crujke8PM3r804: data larger than 1000 bytes"},
		{File: path, Reason: "part prt_a2b90fe5e000O5UHWfCFWn05Gq: invalid JSON: json: cannot unmarshal number into Go struct field partInfo.type of type string"},
		{File: path, Reason: "message msg_a48fde72c000rEAjRWPLQCMK5k: invalid JSON: unexpected end of JSON input"},
	})
	want := maps.Clone(wantSkipped)
	want["orphan-part"] = 1 + 1 // msg_gone's part, and the child's prompt's part
	want["empty-user-message"]++
	equal(t, "skipped", a.skipped, want)
	// A cycle of parents keeps its sessions, after the others.
	equal(t, "sessions", importertest.SourceIDs(a.sessions), []string{archID, mainID, childID, "ses_loop1", "ses_loop2"})
	equal(t, "child roles", roles(a.session(t, childID)), map[string]int{"assistant": 1})
}

func TestNotOpencodeDB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db := openWriter(t, path, "WAL")
	mustExec(t, db, "CREATE TABLE session (id text)")
	db.Close()
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{path}}); err == nil || !strings.Contains(err.Error(), "not an opencode database") {
		t.Errorf("read a database without opencode's tables: %v", err)
	}
}

// TestDBReadOnly: reading a closed database writes nothing, not even a
// -wal or -shm file beside it.
func TestDBReadOnly(t *testing.T) {
	dir := t.TempDir()
	path := buildDB(t, dir, schemaV12)
	before := importertest.ReadBytes(t, path)
	stat, _ := os.Stat(path)
	readRoot(t, dir)
	after := importertest.ReadBytes(t, path)
	if !bytes.Equal(before, after) {
		t.Error("reading changed the database")
	}
	if st, _ := os.Stat(path); !st.ModTime().Equal(stat.ModTime()) {
		t.Error("reading touched the database")
	}
	for _, f := range []string{path + "-wal", path + "-shm", path + "-journal"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("reading created %s", f)
		}
	}
}

// TestDBWhileOpencodeWrites: opencode has the database open and is in
// the middle of a write. The read neither waits for it nor sees what it
// has not committed, sees it once committed, and holds nothing that
// stops opencode from checkpointing afterwards.
func TestDBWhileOpencodeWrites(t *testing.T) {
	dir := t.TempDir()
	path := buildDB(t, dir, schemaLater)
	oc := openWriter(t, path, "WAL")
	defer oc.Close()
	mustExec(t, oc, "UPDATE session SET time_updated = time_updated + 1 WHERE id = ?", childID)

	a := readRoot(t, dir)
	equal(t, "bundle", a.bundles, []importer.Bundle{{Files: []string{path, path + "-wal"}}})

	tx, err := oc.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_b000000000000000000000000', ?, 1762161300000, 1762161300000, '{\"role\":\"user\",\"time\":{\"created\":1762161300000}}')", childID)
	mustExec(t, tx, "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_b000000000000000000000000', 'msg_b000000000000000000000000', ?, 1762161300000, 1762161300000, '{\"type\":\"text\",\"text\":\"and the tests?\"}')", childID)
	done := make(chan *importer.Result, 1)
	go func() {
		res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{path}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case res := <-done:
		if res != nil {
			equal(t, "uncommitted", len(res.Sessions[2].Messages), 2)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read waits for opencode's write")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	a = readRoot(t, dir)
	child := a.session(t, childID)
	equal(t, "committed", len(child.Messages), 3)
	equal(t, "new prompt", child.Messages[2].Text(), "and the tests?")

	var busy, logged, moved int
	if err := oc.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &moved); err != nil {
		t.Fatal(err)
	}
	equal(t, "checkpoint blocked", busy, 0)
}
