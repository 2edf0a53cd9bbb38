package goose

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// schemaFirst is sessions.db as goose's first schema created it, before
// its numbered migrations.
const schemaFirst = `CREATE TABLE sessions (
	id TEXT PRIMARY KEY,
	description TEXT NOT NULL DEFAULT '',
	working_dir TEXT NOT NULL,
	created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
	updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
	extension_data TEXT DEFAULT '{}',
	total_tokens INTEGER,
	input_tokens INTEGER,
	output_tokens INTEGER,
	accumulated_total_tokens INTEGER,
	accumulated_input_tokens INTEGER,
	accumulated_output_tokens INTEGER,
	schedule_id TEXT,
	recipe_json TEXT
);
CREATE TABLE messages (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id TEXT NOT NULL REFERENCES sessions(id),
	role TEXT NOT NULL,
	content_json TEXT NOT NULL,
	created_timestamp INTEGER NOT NULL,
	timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
	tokens INTEGER
);
CREATE INDEX idx_messages_session ON messages(session_id);
CREATE INDEX idx_messages_timestamp ON messages(timestamp);
CREATE INDEX idx_sessions_updated ON sessions(updated_at DESC);
`

// migrations are goose's migrations 1 to 13, as its source applies
// them, without the tables the reader does not touch.
var migrations = []string{
	1:  `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`,
	2:  `ALTER TABLE sessions ADD COLUMN user_recipe_values_json TEXT`,
	3:  `ALTER TABLE messages ADD COLUMN metadata_json TEXT`,
	4:  `ALTER TABLE sessions ADD COLUMN name TEXT DEFAULT ''; ALTER TABLE sessions ADD COLUMN user_set_name BOOLEAN DEFAULT FALSE`,
	5:  `ALTER TABLE sessions ADD COLUMN session_type TEXT NOT NULL DEFAULT 'user'; CREATE INDEX idx_sessions_type ON sessions(session_type)`,
	6:  `ALTER TABLE sessions ADD COLUMN provider_name TEXT; ALTER TABLE sessions ADD COLUMN model_config_json TEXT`,
	7:  `ALTER TABLE messages ADD COLUMN message_id TEXT; UPDATE messages SET message_id = 'msg_' || session_id || '_' || id; CREATE INDEX idx_messages_message_id ON messages(message_id)`,
	8:  `ALTER TABLE sessions ADD COLUMN goose_mode TEXT NOT NULL DEFAULT 'auto'`,
	9:  `UPDATE sessions SET session_type = 'acp' WHERE session_type = 'user' AND name = 'ACP Session' AND user_set_name = FALSE`,
	10: `ALTER TABLE sessions ADD COLUMN thread_id TEXT; CREATE TABLE IF NOT EXISTS threads (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT 'New Chat', user_set_name BOOLEAN DEFAULT FALSE, working_dir TEXT, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, archived_at TIMESTAMP, metadata_json TEXT DEFAULT '{}'); CREATE TABLE IF NOT EXISTS thread_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, thread_id TEXT NOT NULL REFERENCES threads(id), session_id TEXT, message_id TEXT, role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, metadata_json TEXT DEFAULT '{}')`,
	11: ``,
	12: `ALTER TABLE sessions ADD COLUMN archived_at TIMESTAMP; ALTER TABLE sessions ADD COLUMN project_id TEXT`,
	13: `ALTER TABLE sessions ADD COLUMN accumulated_cost REAL`,
}

// openWriter opens path read-write in WAL mode, as goose does.
var (
	openWriter = importertest.SQLiteWriter
	exec       = importertest.Exec
)

// migrate brings db from schema from to schema to.
func migrate(t testing.TB, db *sql.DB, from, to int) {
	t.Helper()
	for v := from + 1; v <= to; v++ {
		if migrations[v] != "" {
			exec(t, db, migrations[v])
		}
		if v > 1 {
			exec(t, db, "INSERT INTO schema_version (version) VALUES (?)", v)
		}
	}
}

// The conversation the tests write: a prompt, a reply with thinking and
// a tool call, its result, a call that fails, an unknown item, a
// compaction, and a last reply.
var conversation = []struct {
	role, content, metadata string
}{
	{"user", `[{"type":"text","text":"list the files"}]`, ``},
	{"assistant", `[{"type":"thinking","thinking":"I should run ls.","signature":"sig1"},{"type":"text","text":"Listing."},{"type":"toolRequest","id":"call_1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls"}}}}]`, ``},
	{"user", `[{"type":"toolResponse","id":"call_1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"a.go\nb.go"}],"isError":false}}}]`, ``},
	{"assistant", `[{"type":"toolRequest","id":"call_2","toolCall":{"status":"success","value":{"name":"developer__text_editor","arguments":{"path":"/nope"}}}},{"type":"toolRequest","id":"call_3","toolCall":{"status":"error","error":"-32602: could not parse arguments"}},{"type":"futurePart","x":1}]`, ``},
	{"user", `[{"type":"toolResponse","id":"call_2","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"no such file"}],"isError":true}}},{"type":"toolResponse","id":"call_3","toolResult":{"status":"error","error":"-32602: could not parse arguments"}},{"type":"toolResponse","id":"call_9","toolResult":{"status":"success","value":{"content":[]}}}]`, ``},
	{"assistant", `[{"type":"text","text":"There are two files."},{"type":"systemNotification","notificationType":"inlineMessage","msg":"compacting"}]`, `{"userVisible":true,"agentVisible":false}`},
	{"user", `[{"type":"text","text":"Summary: the user listed two files."}]`, `{"userVisible":false,"agentVisible":true}`},
	{"assistant", `[{"type":"text","text":"Your context was compacted."}]`, `{"userVisible":false,"agentVisible":true}`},
	{"user", `[{"type":"text","text":"thanks"},{"type":"image","data":"aGk=","mimeType":"image/png"}]`, ``},
	{"assistant", `[{"type":"text","text":"You are welcome."}]`, ``},
}

const sessionID = "20251120_1"

// buildDB creates dir/sessions.db at schema version (0 for the first
// schema) with the test's conversation in session 20251120_1, a
// session without messages, and a row that is not JSON; n limits the
// messages written (all when n < 0).
func buildDB(t testing.TB, dir string, version, n int) string {
	t.Helper()
	path := filepath.Join(dir, dbName)
	db := openWriter(t, path)
	defer db.Close()
	exec(t, db, schemaFirst)
	migrate(t, db, 0, version)
	exec(t, db, `INSERT INTO sessions (id, description, working_dir, created_at, updated_at, accumulated_input_tokens, accumulated_output_tokens, input_tokens, output_tokens) VALUES (?, 'list files', '/home/u/proj', '2025-11-20 10:00:00', '2025-11-20 10:05:00', 1200, 340, 600, 90)`, sessionID)
	if version >= 6 {
		exec(t, db, `UPDATE sessions SET name = 'Listing files', provider_name = 'openai', model_config_json = '{"model_name":"gpt-4o","context_limit":128000}' WHERE id = ?`, sessionID)
	}
	exec(t, db, `INSERT INTO sessions (id, description, working_dir) VALUES ('20251120_2', '', '/tmp')`)
	addMessages(t, db, version, conversation[:count(n)])
	return path
}

func count(n int) int {
	if n < 0 || n > len(conversation) {
		return len(conversation)
	}
	return n
}

// addMessages appends messages as goose's add_message does at version.
func addMessages(t testing.TB, db *sql.DB, version int, msgs []struct{ role, content, metadata string }) {
	t.Helper()
	var next int
	if err := db.QueryRow(`SELECT count(*) FROM messages WHERE session_id = ?`, sessionID).Scan(&next); err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		created := 1763632800 + int64(next+i)*10
		switch {
		case version >= 7:
			exec(t, db, `INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) VALUES (?, ?, ?, ?, ?, ?)`,
				"msg_"+string(rune('a'+next+i)), sessionID, m.role, m.content, created, orDefault(m.metadata))
		case version >= 3:
			exec(t, db, `INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES (?, ?, ?, ?, ?)`,
				sessionID, m.role, m.content, created, orDefault(m.metadata))
		default:
			exec(t, db, `INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES (?, ?, ?, ?)`,
				sessionID, m.role, m.content, created)
		}
	}
}

func orDefault(md string) string {
	if md == "" {
		return `{"userVisible":true,"agentVisible":true}`
	}
	return md
}

func read(t testing.TB, path string) *importer.Result {
	t.Helper()
	res := importertest.ReadOne(t, Format{}, path)
	importertest.Check(t, res)
	return res
}

func TestReadDB(t *testing.T) {
	for _, version := range []int{0, 5, 13} {
		t.Run("schema"+string(rune('0'+version/10))+string(rune('0'+version%10)), func(t *testing.T) {
			dir := t.TempDir()
			res := read(t, buildDB(t, dir, version, -1))
			if len(res.Sessions) != 1 || res.Skipped["empty-session"] != 1 {
				t.Fatalf("sessions %d, skipped %v", len(res.Sessions), res.Skipped)
			}
			s := importertest.Session(t, res, sessionID)
			wantRoles := "user assistant assistant assistant summary system user assistant"
			if version < 3 {
				// No visibility before migration 3: the summary and the
				// note are a prompt and a reply.
				wantRoles = "user assistant assistant assistant user assistant user assistant"
			}
			if got := importertest.Roles(s); got != wantRoles {
				t.Errorf("roles %q, want %q", got, wantRoles)
			}
			if s.Cwd != "/home/u/proj" || s.CreatedAt.IsZero() || s.UpdatedAt.Before(s.CreatedAt) {
				t.Errorf("session %+v", s)
			}
			wantTitle, wantModel := "list files", ""
			if version >= 6 {
				wantTitle, wantModel = "Listing files", "gpt-4o"
			}
			if s.Title != wantTitle || s.Model != wantModel {
				t.Errorf("title %q model %q", s.Title, s.Model)
			}
			c := importertest.TallyOf(s)
			if c.Tools[loom.ToolCompleted] != 1 || c.Tools[loom.ToolError] != 2 || c.Reasoning != 1 || c.Files != 1 {
				t.Errorf("tally %+v", c)
			}
			reply := s.Messages[1]
			tool := reply.Parts[2]
			if tool.Name != "developer__shell" || string(tool.Input) != `{"command":"ls"}` || string(tool.Output) != `"a.go\nb.go"` || tool.EndedAt == nil {
				t.Errorf("tool part %+v", tool)
			}
			if string(reply.Parts[0].Metadata) != `{"signature":"sig1"}` {
				t.Errorf("reasoning %+v", reply.Parts[0])
			}
			failed := s.Messages[2].Parts
			if failed[0].Status != loom.ToolError || failed[0].Error != "no such file" || failed[1].Error == "" {
				t.Errorf("failed calls %+v", failed)
			}
			last := s.Messages[len(s.Messages)-1]
			if last.Usage.InputTokens != 1200 || last.Usage.OutputTokens != 340 || last.Model != wantModel {
				t.Errorf("last reply usage %+v model %q", last.Usage, last.Model)
			}
			for _, m := range s.Messages[:len(s.Messages)-1] {
				if !m.Usage.IsZero() && m.Role != loom.RoleSummary {
					t.Errorf("message %s has usage %+v", m.ID, m.Usage)
				}
			}
			for _, k := range []string{"unknown:futurePart", "orphan-tool-response", "systemNotification"} {
				if res.Skipped[k] != 1 {
					t.Errorf("skipped %v, want one %s", res.Skipped, k)
				}
			}
			if version >= 3 {
				sum := s.Messages[4]
				if sum.Role != loom.RoleSummary || sum.Usage.Compactions != 1 || sum.Text() != "Summary: the user listed two files." {
					t.Errorf("summary %+v", sum)
				}
			}
		})
	}
}

// TestGrowsWithStableIDs: a session that grows keeps the ids of the
// messages read before, and a database that goose migrates to
// message_id (schema 7) keeps them too, so an import adds only what is
// new, without a fork.
func TestGrowsWithStableIDs(t *testing.T) {
	dir := t.TempDir()
	path := buildDB(t, dir, 5, 4)
	first := read(t, path).Sessions[0]
	db := openWriter(t, path)
	addMessages(t, db, 5, conversation[4:6])
	migrate(t, db, 5, 13)
	addMessages(t, db, 13, conversation[6:])
	db.Close()
	second := read(t, path).Sessions[0]
	if len(second.Messages) <= len(first.Messages) {
		t.Fatalf("did not grow: %d then %d", len(first.Messages), len(second.Messages))
	}
	for i, m := range first.Messages {
		if second.Messages[i].ID != m.ID {
			t.Errorf("message %d: id %s then %s", i, m.ID, second.Messages[i].ID)
		}
	}
	// The call made before the result arrived is completed now.
	if p := second.Messages[2].Parts[0]; p.Status != loom.ToolError || p.Error != "no such file" {
		t.Errorf("call %+v", p)
	}
}

// TestImportTwice imports the database into a store, grows it and
// imports again: only the new messages come in, and a third import adds
// nothing.
func TestImportTwice(t *testing.T) {
	dir := t.TempDir()
	path := buildDB(t, dir, 13, 6)
	st := importertest.Store(t)
	rep := importertest.Import(t, st, Format{}, dir)
	if rep.SessionsNew != 1 || rep.FilesFailed != 0 {
		t.Fatalf("first import %+v", rep)
	}
	db := openWriter(t, path)
	addMessages(t, db, 13, conversation[6:])
	db.Close()
	importertest.GrowsBy(t, st, Format{}, 4, dir)
	ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Surface: Tool})
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions %v %v", ss, err)
	}
	u := ss[0].Usage
	if u.InputTokens != 1200 || u.OutputTokens != 340 {
		t.Errorf("session usage %+v: counted once, on the last reply", u)
	}
}

// TestReadOnly: reading leaves goose's database as it was, creates no
// file beside it, and reads while goose holds it open and writes.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	path := buildDB(t, dir, 13, -1)
	before, _ := os.ReadFile(path)
	read(t, path)
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("the database changed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files beside the database: %v", entries)
	}
	// goose open, in the middle of a write transaction: the read sees
	// what was committed and does not wait.
	db := openWriter(t, path)
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) VALUES ('msg_z', ?, 'user', '[{"type":"text","text":"uncommitted"}]', 1763640000)`, sessionID); err != nil {
		t.Fatal(err)
	}
	s := read(t, path).Sessions[0]
	for _, m := range s.Messages {
		if m.ID == "msg_z" {
			t.Error("read a message goose has not committed")
		}
	}
}

func TestReadJSONL(t *testing.T) {
	res := read(t, filepath.Join("testdata", "20250301_101500.jsonl"))
	s := importertest.Session(t, res, "20250301_101500")
	if s.Title != "fix the flaky test" || s.Cwd != "/home/u/app" {
		t.Errorf("session %+v", s)
	}
	if got := importertest.Roles(s); got != "user assistant assistant user assistant" {
		t.Errorf("roles %q", got)
	}
	tool := s.Messages[1].Parts[1]
	if tool.Status != loom.ToolCompleted || string(tool.Output) != `"ok  \tpkg\t0.2s"` {
		t.Errorf("tool %+v", tool)
	}
	if s.Messages[0].ID != "20250301_101500:2" {
		t.Errorf("id %q", s.Messages[0].ID)
	}
	last := s.Messages[len(s.Messages)-1]
	if last.Usage.InputTokens != 900 || last.Usage.OutputTokens != 120 {
		t.Errorf("usage %+v", last.Usage)
	}
	if len(res.Problems) != 1 || res.Problems[0].Line != 7 {
		t.Errorf("problems %v", res.Problems)
	}
}

// TestBundles: a directory with the database reads the database only;
// one without reads its JSONL files.
func TestBundles(t *testing.T) {
	dir := t.TempDir()
	data := importertest.ReadBytes(t, filepath.Join("testdata", "20250301_101500.jsonl"))
	importertest.WriteFile(t, filepath.Join(dir, "20250301_101500.jsonl"), data, 0o644)
	bs, err := Format{}.Bundles(context.Background(), dir)
	if err != nil || len(bs) != 1 || !strings.HasSuffix(bs[0].Name(), ".jsonl") {
		t.Fatalf("bundles %v %v", bs, err)
	}
	buildDB(t, dir, 13, -1)
	bs, err = Format{}.Bundles(context.Background(), dir)
	if err != nil || len(bs) != 1 || filepath.Base(bs[0].Name()) != dbName {
		t.Fatalf("bundles %v %v", bs, err)
	}
}

func TestRoots(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	home := filepath.FromSlash("/home/u")
	got := Format{}.Roots(env(map[string]string{"GOOSE_PATH_ROOT": filepath.FromSlash("/opt/g")}), home)
	if !slices.Equal(got, []string{filepath.FromSlash("/opt/g/data/sessions")}) {
		t.Errorf("GOOSE_PATH_ROOT: %v", got)
	}
	got = Format{}.Roots(env(map[string]string{"GOOSE_PATH_ROOT": "relative"}), home)
	if len(got) == 0 || strings.Contains(got[0], "relative") {
		t.Errorf("a relative GOOSE_PATH_ROOT is ignored, as goose does: %v", got)
	}
}

// TestBadInput: rows and lines goose did not write are problems or
// skipped, never a failure of the whole file.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	path := buildDB(t, dir, 13, 2)
	db := openWriter(t, path)
	for _, c := range []string{`not json`, `{"type":"text"}`, `[5, {"type":""}, {"type":"toolRequest"}, {"type":"toolResponse","id":"x"}]`, `[]`} {
		exec(t, db, `INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES (?, 'assistant', ?, -5, 'nope')`, sessionID, c)
	}
	exec(t, db, `INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES (?, 'system', '[{"type":"text","text":"x"}]', 0)`, sessionID)
	db.Close()
	res := read(t, path)
	if len(res.Problems) < 3 || res.Skipped["unknown:system"] != 1 {
		t.Errorf("problems %v skipped %v", res.Problems, res.Skipped)
	}
	b, _ := json.Marshal(res.Problems)
	if !strings.Contains(string(b), "not a list") {
		t.Errorf("problems %s", b)
	}
	// Not a goose database.
	other := filepath.Join(t.TempDir(), "x.db")
	odb := openWriter(t, other)
	exec(t, odb, `CREATE TABLE t (a)`)
	odb.Close()
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{other}}); err == nil {
		t.Error("read a database that is not goose's")
	}
}
