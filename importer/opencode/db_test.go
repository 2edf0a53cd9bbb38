package opencode

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	path := filepath.Join(dir, dbName)
	db := openWriter(t, path)
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

// openWriter opens path the way opencode does: read-write, WAL.
func openWriter(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
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
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
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
