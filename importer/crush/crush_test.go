package crush

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// schemaInitial is crush.db as Crush's first migration
// (20250424200609_initial) creates it, without its triggers' bodies
// that keep counts the reader does not use.
const schemaInitial = `CREATE TABLE sessions (
	id TEXT PRIMARY KEY,
	parent_session_id TEXT,
	title TEXT NOT NULL,
	message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
	prompt_tokens INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
	completion_tokens INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
	cost REAL NOT NULL DEFAULT 0.0 CHECK (cost >= 0.0),
	updated_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE TABLE files (
	id TEXT PRIMARY KEY,
	session_id TEXT NOT NULL,
	path TEXT NOT NULL,
	content TEXT NOT NULL,
	version INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE,
	UNIQUE(path, session_id, version)
);
CREATE TABLE messages (
	id TEXT PRIMARY KEY,
	session_id TEXT NOT NULL,
	role TEXT NOT NULL,
	parts BLOB NOT NULL default '[]',
	model TEXT,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	finished_at INTEGER,
	FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE
);
CREATE INDEX idx_messages_session_id ON messages (session_id);
CREATE TRIGGER update_session_message_count_on_insert AFTER INSERT ON messages
BEGIN UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id; END;
`

// migrations are Crush's later migrations that touch what the reader
// reads, in order: the summary message of a session, the provider of a
// message, the summary flag of a message, and a session's todos.
var migrations = []string{
	`ALTER TABLE sessions ADD COLUMN summary_message_id TEXT`,
	`ALTER TABLE messages ADD COLUMN provider TEXT`,
	`ALTER TABLE messages ADD COLUMN is_summary_message INTEGER DEFAULT 0 NOT NULL`,
	`ALTER TABLE sessions ADD COLUMN todos TEXT`,
}

var (
	openWriter = importertest.SQLiteWriter
	exec       = importertest.Exec
)

const (
	sessionID = "0b8e2d4c-1111-4c3e-9a55-000000000001"
	subID     = "m2$$call_2"
)

type row struct{ id, session, role, parts string }

// conversation is what the tests write: a prompt, a reply with
// reasoning, a shell call and a sub-agent's call, their results (and one
// whose call is not there), a part of an unknown type, a reply, a
// summary, a prompt with an image, a last reply; and the sub-agent's own
// conversation.
var conversation = []row{
	{"m1", sessionID, "user", `[{"type":"text","data":{"text":"fix the build"}},{"type":"finish","data":{"reason":"stop","time":0}}]`},
	{"m2", sessionID, "assistant", `[{"type":"reasoning","data":{"thinking":"Look at the error first.","signature":"sig1","started_at":1763632801,"finished_at":1763632802}},{"type":"text","data":{"text":"Running the build."}},{"type":"tool_call","data":{"id":"call_1","name":"bash","input":"{\"command\": \"go build ./...\"}","provider_executed":false,"finished":true}},{"type":"tool_call","data":{"id":"call_2","name":"agent","input":"{\"prompt\":\"find the failing test\"}","finished":true}},{"type":"hologram","data":{}},{"type":"finish","data":{"reason":"tool_use","time":1763632805}}]`},
	{"m3", sessionID, "tool", `[{"type":"tool_result","data":{"tool_call_id":"call_1","name":"bash","content":"main.go:3: undefined: x","metadata":"","is_error":true}},{"type":"tool_result","data":{"tool_call_id":"call_2","name":"agent","content":"TestX in x_test.go","is_error":false}},{"type":"tool_result","data":{"tool_call_id":"call_9","name":"view","content":"?"}},{"type":"finish","data":{"reason":"stop","time":0}}]`},
	{"sa", subID, "user", `[{"type":"text","data":{"text":"find the failing test"}},{"type":"finish","data":{"reason":"stop"}}]`},
	{"sb", subID, "assistant", `[{"type":"text","data":{"text":"TestX in x_test.go"}},{"type":"finish","data":{"reason":"end_turn","time":1763632807}}]`},
	{"m4", sessionID, "assistant", `[{"type":"text","data":{"text":"Fixed the undefined name."}},{"type":"finish","data":{"reason":"end_turn","time":1763632810}}]`},
	{"m5", sessionID, "assistant", `[{"type":"text","data":{"text":"Summary: the build was fixed."}},{"type":"finish","data":{"reason":"end_turn","time":1763632812}}]`},
	{"m6", sessionID, "user", `[{"type":"text","data":{"text":"thanks, and this?"}},{"type":"binary","data":{"Path":"shot.png","MIMEType":"image/png","Data":"aGk="}},{"type":"finish","data":{"reason":"stop"}}]`},
	{"m7", sessionID, "assistant", `[{"type":"text","data":{"text":"A screenshot of the build."}},{"type":"finish","data":{"reason":"end_turn","time":1763632820}}]`},
}

// buildDB creates a project's .crush/crush.db after the first migration
// and the next version ones, with the conversation's first n rows.
func buildDB(t testing.TB, project string, version, n int) string {
	t.Helper()
	path := filepath.Join(project, dataDir, dbName)
	db := openWriter(t, path)
	defer db.Close()
	exec(t, db, schemaInitial)
	for _, m := range migrations[:version] {
		exec(t, db, m)
	}
	exec(t, db, `INSERT INTO sessions (id, title, prompt_tokens, completion_tokens, cost, created_at, updated_at) VALUES (?, 'Fix the build', 1500, 200, 0.05, 1763632800, 1763632820)`, sessionID)
	exec(t, db, `INSERT INTO sessions (id, parent_session_id, title, prompt_tokens, completion_tokens, cost, created_at, updated_at) VALUES (?, ?, 'New Agent Session', 300, 40, 0.01, 1763632803, 1763632807)`, subID, sessionID)
	exec(t, db, `INSERT INTO sessions (id, parent_session_id, title, created_at, updated_at) VALUES ('title-x', 'x', 'Title', 1763632800, 1763632800)`)
	exec(t, db, `INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('empty', 'New session', 1763632900, 1763632900)`)
	if version >= 1 {
		exec(t, db, `UPDATE sessions SET summary_message_id = 'm5' WHERE id = ?`, sessionID)
	}
	addRows(t, db, version, conversation[:min(n, len(conversation))], 0)
	return path
}

func addRows(t testing.TB, db *sql.DB, version int, rows []row, from int) {
	t.Helper()
	for i, m := range rows {
		at := 1763632800 + int64(from+i)*2
		switch {
		case version >= 3:
			exec(t, db, `INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at, is_summary_message) VALUES (?, ?, ?, ?, 'claude-sonnet-4-5', 'anthropic', ?, ?, ?)`,
				m.id, m.session, m.role, m.parts, at, at+1, m.id == "m5")
		case version >= 2:
			exec(t, db, `INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at) VALUES (?, ?, ?, ?, 'claude-sonnet-4-5', 'anthropic', ?, ?)`,
				m.id, m.session, m.role, m.parts, at, at+1)
		default:
			exec(t, db, `INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at) VALUES (?, ?, ?, ?, 'claude-sonnet-4-5', ?, ?)`,
				m.id, m.session, m.role, m.parts, at, at+1)
		}
	}
}

func read(t testing.TB, root string) *importer.Result {
	t.Helper()
	res := importertest.ReadOne(t, Format{}, root)
	importertest.CheckValidOf(t, Tool, res)
	return res
}

// TestReadDB reads a database of each schema: every prompt, reply,
// reasoning block and tool call once and in order, each call with its
// result, the sub-agent linked to the call that ran it, the summary,
// and the session's usage once, on its last reply.
func TestReadDB(t *testing.T) {
	for _, version := range []int{0, 1, 4} {
		t.Run("migrations"+string(rune('0'+version)), func(t *testing.T) {
			project := t.TempDir()
			buildDB(t, project, version, len(conversation))
			res := read(t, project)
			if len(res.Sessions) != 2 || res.Sessions[0].SourceID != sessionID {
				t.Fatalf("sessions %v", res.Sessions)
			}
			s := res.Sessions[0]
			wantRoles := "user assistant assistant summary user assistant"
			if version == 0 {
				wantRoles = "user assistant assistant assistant user assistant"
			}
			if got := importertest.Roles(s); got != wantRoles {
				t.Errorf("roles %q, want %q", got, wantRoles)
			}
			if s.Title != "Fix the build" || s.Cwd != project || s.Kind != loom.KindMain || s.CreatedAt.IsZero() {
				t.Errorf("session %+v", s)
			}
			reply := s.Messages[1]
			if len(reply.Parts) != 5 {
				t.Fatalf("reply parts %+v", reply.Parts)
			}
			if p := reply.Parts[0]; p.Type != loom.PartReasoning || p.Text != "Look at the error first." || string(p.Metadata) != `{"signature":"sig1"}` {
				t.Errorf("reasoning %+v", p)
			}
			if p := reply.Parts[2]; p.Name != "bash" || string(p.Input) != `{"command":"go build ./..."}` || p.Status != loom.ToolError || p.Error != "main.go:3: undefined: x" || p.EndedAt == nil {
				t.Errorf("shell call %+v", p)
			}
			if p := reply.Parts[3]; p.Name != "agent" || p.Status != loom.ToolCompleted || string(p.Output) != `"TestX in x_test.go"` {
				t.Errorf("agent call %+v", p)
			}
			if p := reply.Parts[4]; p.Type != loom.PartAgent || p.SessionID != subID {
				t.Errorf("agent link %+v", p)
			}
			if reply.Model != "claude-sonnet-4-5" || reply.CompletedAt == nil || !reply.CompletedAt.Equal(time.Unix(1763632805, 0)) {
				t.Errorf("reply model %q completed %v", reply.Model, reply.CompletedAt)
			}
			if version >= 2 && reply.Provider != "anthropic" {
				t.Errorf("provider %q", reply.Provider)
			}
			sub := res.Sessions[1]
			if sub.SourceID != subID || sub.Kind != loom.KindSubagent || sub.ParentSourceID != sessionID || importertest.Roles(sub) != "user assistant" {
				t.Errorf("sub-agent %+v", sub)
			}
			if u := sub.Messages[1].Usage; u.InputTokens != 300 || u.CostUSD != 0.01 {
				t.Errorf("sub-agent usage %+v", u)
			}
			last := s.Messages[len(s.Messages)-1]
			if u := last.Usage; u.InputTokens != 1500 || u.OutputTokens != 200 || u.CostUSD < 0.0399 || u.CostUSD > 0.0401 {
				t.Errorf("usage %+v: the session's, its sub-agent's cost taken out", u)
			}
			for _, m := range s.Messages[:len(s.Messages)-1] {
				if m.Usage.InputTokens != 0 || m.Usage.CostUSD != 0 {
					t.Errorf("message %s has usage %+v", m.ID, m.Usage)
				}
			}
			if version >= 1 {
				if sum := s.Messages[3]; sum.Usage.Compactions != 1 || sum.Text() != "Summary: the build was fixed." {
					t.Errorf("summary %+v", sum)
				}
			}
			img := s.Messages[len(s.Messages)-2].Parts[1]
			if img.Type != loom.PartFile || img.URL != "data:image/png;base64,aGk=" || img.Filename != "shot.png" {
				t.Errorf("image %+v", img)
			}
			for k, n := range map[string]int{"unknown:hologram": 1, "orphan-tool-result": 1, "title-session": 1, "empty-session": 1} {
				if res.Skipped[k] != n {
					t.Errorf("skipped %v, want %d %s", res.Skipped, n, k)
				}
			}
		})
	}
}

// TestImportTwice imports a database into a store, grows it and imports
// again: only the new messages come in, the usage counted once, and a
// third import adds nothing.
func TestImportTwice(t *testing.T) {
	project := t.TempDir()
	path := buildDB(t, project, 4, 3)
	st := importertest.Store(t)
	rep := importertest.Import(t, st, Format{}, project)
	if rep.SessionsNew != 1 || rep.FilesFailed != 0 {
		t.Fatalf("first import %+v", rep)
	}
	db := openWriter(t, path)
	addRows(t, db, 4, conversation[3:], 3)
	db.Close()
	rep = importertest.Import(t, st, Format{}, project)
	if rep.SessionsNew != 1 || rep.SessionsGrown != 1 || rep.FilesFailed != 0 {
		t.Fatalf("second import %+v", rep)
	}
	importertest.NothingNew(t, st, Format{}, project)
	if u := importertest.StoredUsage(t, st, Tool, sessionID); u.InputTokens != 1500 || u.OutputTokens != 200 {
		t.Errorf("session usage %+v", u)
	}
}

// TestWatch: --watch follows a session Crush writes while it runs.
func TestWatch(t *testing.T) {
	project := t.TempDir()
	path := buildDB(t, project, 4, 3)
	db := openWriter(t, path)
	defer db.Close()
	w := importertest.Watch(t, importertest.Store(t), Format{}, filepath.Join(project, dataDir))
	if r := w.First(t); r.SessionsNew != 1 {
		t.Fatalf("first run %+v", r)
	}
	addRows(t, db, 4, conversation[5:6], 5)
	w.Follows(t, "the new reply")
}

// TestReadOnly: reading leaves Crush's database as it was, creates no
// file beside it, and reads what Crush committed while it writes.
func TestReadOnly(t *testing.T) {
	project := t.TempDir()
	path := buildDB(t, project, 4, len(conversation))
	before, _ := os.ReadFile(path)
	read(t, project)
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("the database changed")
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("files beside the database: %v", entries)
	}
	db := openWriter(t, path)
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES ('mz', ?, 'user', '[{"type":"text","data":{"text":"uncommitted"}}]', 1763640000, 1763640000)`, sessionID); err != nil {
		t.Fatal(err)
	}
	for _, m := range read(t, project).Sessions[0].Messages {
		if m.ID == "mz" {
			t.Error("read a message Crush has not committed")
		}
	}
}

// TestRoots: the data directories of the projects Crush lists in its
// projects.json, under $CRUSH_GLOBAL_DATA or the XDG data directory.
func TestRoots(t *testing.T) {
	home := t.TempDir()
	global := filepath.Join(home, ".local", "share", "crush")
	importertest.MkdirAll(t, global)
	a, b := filepath.Join(home, "src", "a"), filepath.Join(home, "src", "b")
	list := `{"projects":[{"path":"` + filepath.ToSlash(a) + `","data_dir":"` + filepath.ToSlash(filepath.Join(a, ".crush")) + `","last_accessed":"2025-11-20T10:00:00Z"},{"path":"` + filepath.ToSlash(b) + `","data_dir":"data"}]}`
	importertest.WriteFile(t, filepath.Join(global, "projects.json"), []byte(list), 0o644)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	want := []string{filepath.Join(a, ".crush"), filepath.Join(b, "data")}
	if got := (Format{}).Roots(env(nil), home); !slices.Equal(got, want) {
		t.Errorf("roots %v, want %v", got, want)
	}
	if got := (Format{}).Roots(env(map[string]string{globalEnv: filepath.Join(home, "elsewhere")}), home); len(got) != 0 {
		t.Errorf("CRUSH_GLOBAL_DATA without projects.json: %v", got)
	}
}

// TestBadInput: rows Crush did not write are problems or skipped, never
// a failure of the whole database; a database that is not Crush's is an
// error.
func TestBadInput(t *testing.T) {
	project := t.TempDir()
	path := buildDB(t, project, 4, 2)
	db := openWriter(t, path)
	for i, p := range []string{`not json`, `{"type":"text"}`, `[5, {"type":""}, {"type":"tool_call","data":{"input":"[1"}}, {"type":"text","data":"x"}]`, `[]`} {
		exec(t, db, `INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES (?, ?, 'assistant', ?, -5, 0)`, "bad"+string(rune('a'+i)), sessionID, p)
	}
	exec(t, db, `INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES ('odd', ?, 'narrator', '[]', 0, 0)`, sessionID)
	db.Close()
	res := read(t, project)
	if len(res.Problems) < 3 || res.Skipped["unknown:narrator"] != 1 {
		t.Errorf("problems %v skipped %v", res.Problems, res.Skipped)
	}
	importertest.RefusesOtherDB(t, Format{}, "x.db")
}
