package zed

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// schemaFirst is the threads table as Zed first created it; the later
// statements are the columns it added since, as it adds them.
const schemaFirst = `CREATE TABLE IF NOT EXISTS threads (
	id TEXT PRIMARY KEY,
	summary TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	data_type TEXT NOT NULL,
	data BLOB NOT NULL
)`

var laterColumns = []string{
	`ALTER TABLE threads ADD COLUMN parent_id TEXT`,
	`ALTER TABLE threads ADD COLUMN folder_paths TEXT; ALTER TABLE threads ADD COLUMN folder_paths_order TEXT`,
	`ALTER TABLE threads ADD COLUMN created_at TEXT`,
}

type obj = map[string]any

const (
	threadID = "5e0b8a4f-1111-4c3e-9a55-000000000001"
	subID    = "5e0b8a4f-1111-4c3e-9a55-000000000002"
	legacyID = "5e0b8a4f-1111-4c3e-9a55-000000000003"
	userOne  = "u-1"
	userTwo  = "u-2"
)

// agentThread is a thread of version 0.3.0: a prompt with a mention, a
// reply that thinks and calls two tools (one fails, one runs a
// sub-agent), a resume marker, an item of an unknown kind, a second
// prompt and its reply; messages limits it to the first n.
func agentThread(n int) obj {
	msgs := []any{
		obj{"User": obj{"id": userOne, "content": []any{obj{"Text": "why is the build red?"}, obj{"Mention": obj{"uri": "file:///home/u/app/main.go", "content": "package main"}}}}},
		obj{"Agent": obj{"content": []any{
			obj{"Thinking": obj{"text": "Run the build.", "signature": "sig"}},
			obj{"Text": "Running it."},
			obj{"ToolUse": obj{"id": "toolu_1", "name": "terminal", "raw_input": `{"command":"go build"}`, "input": obj{"command": "go build"}, "is_input_complete": true}},
			obj{"ToolUse": obj{"id": "toolu_2", "name": "spawn_agent", "raw_input": "{}", "input": obj{"task": "find x"}, "is_input_complete": true}},
			obj{"Hologram": 1},
		}, "tool_results": obj{
			"toolu_1": obj{"tool_use_id": "toolu_1", "tool_name": "terminal", "is_error": true, "content": obj{"Text": "undefined: x"}, "output": nil},
			"toolu_2": obj{"tool_use_id": "toolu_2", "tool_name": "spawn_agent", "is_error": false, "content": "x is in old.go", "output": obj{"session": subID}},
		}}},
		"Resume",
		obj{"User": obj{"id": userTwo, "content": []any{obj{"Text": "fix it"}}}},
		obj{"Agent": obj{"content": []any{obj{"Text": "Fixed."}}, "tool_results": obj{}}},
	}
	return obj{"version": "0.3.0", "title": "Red build", "messages": msgs[:n], "updated_at": "2025-11-20T10:05:00Z",
		"model":                    obj{"provider": "anthropic", "model": "claude-sonnet-4-5"},
		"cumulative_token_usage":   obj{"input_tokens": 2000, "output_tokens": 150, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 500},
		"request_token_usage":      obj{userOne: obj{"input_tokens": 900, "output_tokens": 70}},
		"initial_project_snapshot": obj{"worktree_snapshots": []any{obj{"worktree_path": "/home/u/app"}}}}
}

func subThread() obj {
	return obj{"version": "0.3.0", "title": "find x", "updated_at": "2025-11-20T10:03:00Z",
		"subagent_context": obj{"parent_thread_id": threadID, "tool_use_id": "toolu_2", "depth": 1},
		"messages": []any{
			obj{"User": obj{"id": "su-1", "content": []any{obj{"Text": "find x"}}}},
			obj{"Agent": obj{"content": []any{obj{"Text": "x is in old.go"}}, "tool_results": obj{}}},
		}}
}

// legacyThread is a thread of the first agent panel (0.2.0), stored as
// plain JSON.
func legacyThread() obj {
	return obj{"version": "0.2.0", "summary": "List files", "updated_at": "2025-05-01T09:00:00Z",
		"messages": []any{
			obj{"id": 0, "role": "user", "segments": []any{obj{"type": "text", "text": "list the files"}}, "tool_uses": []any{}, "tool_results": []any{}, "context": ""},
			obj{"id": 1, "role": "assistant", "segments": []any{obj{"type": "thinking", "text": "Use ls.", "signature": "s"}, obj{"type": "text", "text": "Listing."}},
				"tool_uses": []any{obj{"id": "t1", "name": "list_directory", "input": obj{"path": "."}}}, "tool_results": []any{obj{"tool_use_id": "t1", "is_error": false, "content": "a.go\nb.go"}}},
			obj{"id": 2, "role": "assistant", "segments": []any{obj{"type": "text", "text": "Two files."}}},
		},
		"cumulative_token_usage": obj{"input_tokens": 300, "output_tokens": 20}}
}

func compress(t testing.TB, v any) []byte {
	t.Helper()
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return importertest.Zstd(t, j)
}

// saveThread writes a thread as Zed's save_thread does: zstd, upserted.
func saveThread(t testing.TB, db *sql.DB, later int, id, parent string, v obj) {
	t.Helper()
	data, title, updated := compress(t, v), v["title"], v["updated_at"]
	if later >= 3 {
		importertest.Exec(t, db, `INSERT INTO threads (id, parent_id, folder_paths, folder_paths_order, summary, updated_at, data_type, data, created_at)
			VALUES (?, ?, ?, '0', ?, ?, 'zstd', ?, ?) ON CONFLICT(id) DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at, data = excluded.data`,
			id, nullable(parent), "/home/u/app", title, updated, data, updated)
		return
	}
	importertest.Exec(t, db, `INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES (?, ?, ?, 'zstd', ?)
		ON CONFLICT(id) DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at, data = excluded.data`, id, title, updated, data)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// buildDB makes dir/threads.db with the table of the first version and
// the later columns' first later statements, holding the agent thread's
// first n messages, its sub-agent's thread, and a legacy thread.
func buildDB(t testing.TB, dir string, later, n int) *sql.DB {
	t.Helper()
	db := importertest.SQLiteWriter(t, filepath.Join(dir, threadsDB))
	importertest.Exec(t, db, schemaFirst)
	for _, q := range laterColumns[:later] {
		importertest.Exec(t, db, q)
	}
	saveThread(t, db, later, threadID, "", agentThread(n))
	saveThread(t, db, later, subID, threadID, subThread())
	j, _ := json.Marshal(legacyThread())
	importertest.Exec(t, db, `INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES (?, 'List files', '2025-05-01T09:00:00Z', 'json', ?)`, legacyID, j)
	importertest.Exec(t, db, `INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES ('empty', 'New Thread', '2025-05-01T09:00:00Z', 'json', '{"version":"0.3.0","title":"New Thread","messages":[],"updated_at":"2025-05-01T09:00:00Z"}')`)
	return db
}

func readDir(t testing.TB, dir string) *importer.Result {
	t.Helper()
	return importertest.ReadAllValid(t, Format{}, dir)
}

// TestReadDB reads threads.db with the first table and the latest:
// every prompt, reply, thinking block and tool call once and in order,
// each call with its result, the sub-agent's thread linked to its call,
// the thread's usage once, and the first agent panel's threads.
func TestReadDB(t *testing.T) {
	for _, later := range []int{0, 3} {
		t.Run("columns"+string(rune('0'+later)), func(t *testing.T) {
			dir := t.TempDir()
			buildDB(t, dir, later, 5).Close()
			res := readDir(t, dir)
			if len(res.Sessions) != 3 || res.Skipped["empty-thread"] != 1 || res.Skipped["resume"] != 1 || res.Skipped["unknown:Hologram"] != 1 {
				t.Fatalf("sessions %d skipped %v problems %v", len(res.Sessions), res.Skipped, res.Problems)
			}
			s := importertest.Session(t, res, threadID)
			if got := importertest.Roles(s); got != "user assistant user assistant" {
				t.Errorf("roles %q", got)
			}
			if s.Title != "Red build" || s.Cwd != "/home/u/app" || s.Model != "claude-sonnet-4-5" || s.Provider != "anthropic" {
				t.Errorf("session %+v", s)
			}
			if m := s.Messages[0]; m.ID != userOne || m.Parts[0].Text != "why is the build red?" || m.Parts[1].Type != loom.PartFile || m.Parts[1].Source == nil || m.Parts[1].Source.Text != "package main" {
				t.Errorf("prompt %+v", m)
			}
			r := s.Messages[1]
			if r.ID != userOne+":1" || r.Parts[0].Type != loom.PartReasoning || r.Parts[1].Text != "Running it." {
				t.Errorf("reply %+v", r)
			}
			if p := r.Parts[2]; p.Name != "terminal" || p.Status != loom.ToolError || p.Error != "undefined: x" || string(p.Input) != `{"command":"go build"}` {
				t.Errorf("call %+v", p)
			}
			if p := r.Parts[3]; p.Name != "spawn_agent" || p.Status != loom.ToolCompleted || string(p.Output) != `"x is in old.go"` {
				t.Errorf("agent call %+v", p)
			}
			if p := r.Parts[4]; p.Type != loom.PartAgent || p.SessionID != subID {
				t.Errorf("agent link %+v", p)
			}
			last := s.Messages[3]
			if u := last.Usage; u.InputTokens != 2000 || u.OutputTokens != 150 || u.CacheReadTokens != 500 || u.CacheWriteTokens != 10 {
				t.Errorf("usage %+v", u)
			}
			if !r.Usage.IsZero() {
				t.Errorf("usage on an earlier reply: %+v", r.Usage)
			}
			sub := importertest.Session(t, res, subID)
			if sub.Kind != loom.KindSubagent || sub.ParentSourceID != threadID {
				t.Errorf("sub-agent %+v", sub)
			}
			old := importertest.Session(t, res, legacyID)
			if got := importertest.Roles(old); got != "user assistant assistant" || old.Title != "List files" {
				t.Errorf("legacy %q %q", got, old.Title)
			}
			if p := old.Messages[1].Parts[2]; p.Name != "list_directory" || p.Status != loom.ToolCompleted || string(p.Output) != `"a.go\nb.go"` {
				t.Errorf("legacy call %+v", p)
			}
			if u := old.Messages[2].Usage; u.InputTokens != 300 {
				t.Errorf("legacy usage %+v", u)
			}
		})
	}
}

// TestReadTextThreads reads the assistant panel's saved text threads:
// the message ranges of the text, with their roles, in both versions.
func TestReadTextThreads(t *testing.T) {
	res := readDir(t, filepath.Join("testdata", "conversations"))
	if len(res.Sessions) != 2 {
		t.Fatalf("sessions %v", res.Sessions)
	}
	s := importertest.Session(t, res, "a1b2c3")
	if got := importertest.Roles(s); got != "user assistant user" || s.Title != "Retry backoff" {
		t.Errorf("roles %q title %q", got, s.Title)
	}
	if s.Messages[1].Text() != "It retries the request three times with a backoff." {
		t.Errorf("reply %q", s.Messages[1].Text())
	}
	old := importertest.Session(t, res, "Crates")
	if got := importertest.Roles(old); got != "user assistant" || old.Messages[1].Text() != "A compilation unit in Rust." {
		t.Errorf("0.1.0: %q %q", got, old.Messages[1].Text())
	}
}

// TestImportTwice: a thread that grows (Zed rewrites its row) brings
// only its new messages, and the usage counted once.
func TestImportTwice(t *testing.T) {
	dir := t.TempDir()
	db := buildDB(t, dir, 3, 2)
	defer db.Close()
	st := importertest.Store(t)
	rep := importertest.Import(t, st, Format{}, dir)
	if rep.SessionsNew != 3 || rep.FilesFailed != 0 {
		t.Fatalf("first import %+v", rep)
	}
	saveThread(t, db, 3, threadID, "", agentThread(5))
	importertest.GrowsBy(t, st, Format{}, 2, dir)
	if u := importertest.StoredUsage(t, st, Tool, threadID); u.InputTokens != 2000 {
		t.Errorf("usage %+v", u)
	}
}

// TestWatch: --watch follows a thread Zed saves while it runs.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	db := buildDB(t, dir, 3, 2)
	defer db.Close()
	w := importertest.Watch(t, importertest.Store(t), Format{}, dir)
	if r := w.First(t); r.SessionsNew != 3 {
		t.Fatalf("first run %+v", r)
	}
	saveThread(t, db, 3, threadID, "", agentThread(5))
	w.Follows(t, "the saved thread")
}

// TestBadInput: rows Zed did not write are problems, never a failure of
// the whole database; damaged zstd data is one problem.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	db := buildDB(t, dir, 3, 5)
	for i, row := range [][2]string{{"zstd", "not zstd"}, {"json", "not json"}, {"gzip", "x"}, {"json", `{"version":"0.3.0","messages":[5,{"User":7},{"Agent":{"content":[{"ToolUse":{"id":"a"}},{"Text":3}],"tool_results":{"zz":{"tool_use_id":"nope"}}}}]}`}} {
		importertest.Exec(t, db, `INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES (?, 's', 'never', ?, ?)`, "bad"+string(rune('a'+i)), row[0], row[1])
	}
	db.Close()
	res := readDir(t, dir)
	if len(res.Problems) < 4 {
		t.Errorf("problems %v", res.Problems)
	}
	if !strings.Contains(res.Problems[0].Reason, "zstd") {
		t.Errorf("first problem %v", res.Problems[0])
	}
	importertest.RefusesOtherDB(t, Format{}, "x.db")
	importertest.RefusesFile(t, Format{}, "x.zed.json", `{"zed":"other"}`, "")
}

func TestRoots(t *testing.T) {
	env := map[string]string{"XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c"}
	got := Format{}.Roots(func(k string) string { return env[k] }, "/home/u")
	if len(got) != 2 || (got[0] != filepath.Join("/d", "zed", "threads") && !strings.Contains(got[0], "Zed")) {
		t.Errorf("roots %v", got)
	}
	if !slices.ContainsFunc(got, func(r string) bool { return strings.HasSuffix(r, "conversations") }) {
		t.Errorf("roots %v", got)
	}
}
