package warp

import (
	"context"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// pb builds a protobuf message of Warp's API: each argument a field
// number followed by a string, a []byte (a nested message) or a uint64.
func pb(kv ...any) []byte {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		num := protowire.Number(kv[i].(int))
		switch v := kv[i+1].(type) {
		case string:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendString(b, v)
		case []byte:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendBytes(b, v)
		case uint64:
			b = protowire.AppendTag(b, num, protowire.VarintType)
			b = protowire.AppendVarint(b, v)
		}
	}
	return b
}

// msg is a Message of Warp's task.proto: its id, time and one field of
// its oneof.
func msg(id string, sec uint64, kind int, body []byte) []byte {
	return pb(1, id, 14, pb(1, sec), kind, body)
}

// writeTasks writes Warp's database with a conversation's tasks as Warp
// keeps them (agent_tasks of crates/persistence in warpdotdev/warp at
// 19548aec6285e82b1a4cde526e7ec7e04513c248; each task a
// warp.multi_agent.v1.Task of warpdotdev/warp-proto-apis at
// 00f791620e0c4016e33f298176f7cf785b1026ad): the root task's prompt,
// reasoning, a shell command and its output, a sub-agent's call and
// result, a summarization and a second prompt; the sub-agent's task.
func writeTasks(t *testing.T, dir string) {
	t.Helper()
	db := importertest.SQLiteWriter(t, filepath.Join(dir, dbName))
	defer db.Close()
	importertest.Exec(t, db, `CREATE TABLE ai_queries (id INTEGER PRIMARY KEY, exchange_id TEXT, conversation_id TEXT, start_ts TEXT, input TEXT, working_directory TEXT, output_status TEXT, model_id TEXT)`)
	importertest.Exec(t, db, `CREATE TABLE agent_conversations (id INTEGER PRIMARY KEY NOT NULL, conversation_id TEXT NOT NULL, active_task_id TEXT, conversation_data TEXT NOT NULL, last_modified_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)`)
	importertest.Exec(t, db, `CREATE TABLE agent_tasks (id INTEGER PRIMARY KEY NOT NULL, conversation_id TEXT NOT NULL, task_id TEXT NOT NULL, task BLOB NOT NULL, last_modified_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)`)
	importertest.Exec(t, db, `INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, working_directory, model_id) VALUES
		('e1', 'w-1', '2026-03-03 10:00:00.000000', '[{"Query":{"text":"why is the build slow?"}}]', '/home/u/app', 'claude-4'),
		('e2', 'w-1', '2026-03-03 10:02:00.000000', '[{"Query":{"text":"and the tests?"}}]', '/home/u/app', 'claude-4')`)
	const at = 1772532000 // 2026-03-03 10:00 UTC
	root := pb(1, "task-root",
		5, msg("m1", at, 2, pb(1, "why is the build slow?")),
		5, msg("m2", at+1, 15, pb(1, "Look at what make runs.")),
		5, msg("m3", at+2, 4, pb(1, "call-make", 2, pb(1, "make -n"))),
		5, msg("m4", at+3, 5, pb(1, "call-make", 2, pb(3, "make -n", 5, pb(1, "cc -O2 a.c\ncc -O2 a.c", 2, uint64(0))))),
		5, msg("m5", at+4, 3, pb(1, "It compiles a.c twice.")),
		5, msg("m6", at+5, 4, pb(1, "call-sub", 19, pb(1, "Check the test target."))),
		5, msg("m7", at+9, 5, pb(1, "call-sub", 23, pb(1, "task-sub: the tests run serially"))),
		5, msg("m8", at+10, 16, pb(1, pb(1, "The build was slow from a double compile.", 2, uint64(900)))),
		5, msg("m9", at+120, 2, pb(1, "and the tests?")),
		5, msg("m10", at+121, 25, pb(1, "claude-4-sonnet")),
		5, msg("m11", at+122, 3, pb(1, "They run one at a time.")),
	)
	sub := pb(1, "task-sub", 3, pb(1, "task-root"),
		5, msg("s1", at+6, 2, pb(1, "Check the test target.")),
		5, msg("s2", at+8, 3, pb(1, "The tests run serially.")),
	)
	importertest.Exec(t, db, `INSERT INTO agent_tasks (conversation_id, task_id, task) VALUES ('w-1', 'task-root', ?), ('w-1', 'task-sub', ?), ('w-2', 'broken', ?)`,
		root, sub, []byte{0xff, 0xff})
}

// Warp's tasks: the conversation's prompts, reasoning, replies, a shell
// command completed by its output, a summary; the sub-agent's task a
// sub-agent session linked to the call whose result names it.
func TestReadTasks(t *testing.T) {
	dir := t.TempDir()
	writeTasks(t, dir)
	res, s := importertest.ReadValidFor(t, Format{}, dir, "w-1")
	if got := importertest.Roles(s); got != "user assistant summary user assistant" || s.Cwd != "/home/u/app" {
		t.Fatalf("roles %s, cwd %q", got, s.Cwd)
	}
	tl := importertest.TallyOf(s)
	if tl.Reasoning != 1 || tl.Tools[loom.ToolCompleted] != 2 || tl.Agents != 1 {
		t.Errorf("%+v", tl)
	}
	call := s.Messages[1].Parts[1]
	if call.Name != "run_shell_command" || string(call.Input) != `{"command":"make -n"}` || string(call.Output) != `"cc -O2 a.c\ncc -O2 a.c"` {
		t.Errorf("call %+v", call)
	}
	if s.Messages[4].Model != "claude-4-sonnet" || s.Messages[4].Text() != "They run one at a time." {
		t.Errorf("last reply %+v", s.Messages[4])
	}
	sub := importertest.Session(t, res, "w-1/task-sub")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != "w-1" || importertest.Roles(sub) != "user assistant" {
		t.Errorf("sub-agent %s of %q: %s", sub.Kind, sub.ParentSourceID, importertest.Roles(sub))
	}
	if len(res.Problems) != 1 {
		t.Errorf("problems %v, want the broken task's", res.Problems)
	}
	importertest.ImportsOnce(t, Format{}, dir, 2, 7)
}

// --from list counts what an import makes of the database: the
// conversation and its task's sub-agent, two sessions, not the one
// conversation of its prompts.
func TestCountSessionsIsWhatIsImported(t *testing.T) {
	dir := t.TempDir()
	writeTasks(t, dir)
	n, err := Format{}.CountSessions(context.Background(), importertest.OneBundle(t, Format{}, dir))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(importertest.ReadAllValid(t, Format{}, dir).Sessions); n != got {
		t.Errorf("counted %d sessions, imported %d", n, got)
	}
}
