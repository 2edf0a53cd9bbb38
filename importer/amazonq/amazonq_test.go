package amazonq

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// conversationJSON is a conversation's state as Q writes it: a prompt,
// a tool use answered by its result, the reply, and a /compact summary.
const conversationJSON = `{"conversation_id":"q-conv-1","next_message":null,"history":[
{"user":{"additional_context":"","env_context":{"env_state":{"operating_system":"linux","current_working_directory":"/home/u/infra"}},"content":{"Prompt":{"prompt":"Which stacks exist?"}},"timestamp":"2026-05-02T09:00:00Z","images":null},
 "assistant":{"ToolUse":{"message_id":"m1","content":"Listing them.","tool_uses":[{"id":"t1","name":"execute_bash","orig_name":"execute_bash","args":{"command":"cdk ls"},"orig_args":{"command":"cdk ls"}}]}}},
{"user":{"additional_context":"","env_context":{"env_state":null},"content":{"ToolUseResults":{"tool_use_results":[{"tool_use_id":"t1","content":[{"Text":"NetStack\nAppStack"}],"status":"Success"}]}},"timestamp":"2026-05-02T09:00:05Z","images":null},
 "assistant":{"Response":{"message_id":"m2","content":"Two: NetStack and AppStack."}}}],
"latest_summary":["The user listed the CDK stacks.",{"request_id":"x"}],"model_info":{"model_id":"claude-sonnet-4","context_window_tokens":200000}}`

func TestRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "amazon-q")
	db := importertest.SQLiteWriter(t, filepath.Join(dir, dbName))
	importertest.Exec(t, db, `CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT)`)
	importertest.Exec(t, db, `INSERT INTO conversations VALUES (?, ?), (?, ?)`, "/home/u/infra", conversationJSON, "/home/u/broken", "{not json")
	db.Close()
	res, s := importertest.ReadValidFor(t, Format{}, dir, "q-conv-1")
	if importertest.Roles(s) != "user assistant summary" || s.Cwd != "/home/u/infra" || s.Model != "claude-sonnet-4" {
		t.Fatalf("session %s %q", importertest.Roles(s), s.Cwd)
	}
	if p := s.Messages[1].Parts; len(p) != 3 || p[1].Status != loom.ToolCompleted || p[2].Text != "Two: NetStack and AppStack." {
		t.Errorf("reply %+v", p)
	}
	if len(res.Problems) != 1 {
		t.Errorf("problems %v", res.Problems)
	}
	if n, err := (Format{}).CountSessions(t.Context(), importer.SQLiteBundle(filepath.Join(dir, dbName))); n != 2 || err != nil {
		t.Errorf("counted %d, %v", n, err)
	}
	importertest.ImportsOnce(t, Format{}, dir, 1, 3)
	importertest.RefusesOtherDB(t, Format{}, dbName)
}

// Q's later schema (its migration 008_multiple_conversations_per_path,
// aws/amazon-q-developer-cli at 33494e8f106b27f8211971727290aca1f8385913)
// keeps several conversations a directory in conversations_v2, copying
// the earlier table's in: every conversation of it is read, once, with
// its times, and the earlier table's copies add nothing.
func TestReadConversationsV2(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "amazon-q")
	db := importertest.SQLiteWriter(t, filepath.Join(dir, dbName))
	importertest.Exec(t, db, `CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT)`)
	importertest.Exec(t, db, `INSERT INTO conversations VALUES (?, ?)`, "/home/u/infra", conversationJSON)
	importertest.Exec(t, db, `CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL, value TEXT NOT NULL,
		created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (key, conversation_id))`)
	second := strings.Replace(strings.Replace(conversationJSON, "q-conv-1", "q-conv-2", 1), "Which stacks exist?", "Which stack is largest?", 1)
	importertest.Exec(t, db, `INSERT INTO conversations_v2 VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)`,
		"/home/u/infra", "q-conv-1", conversationJSON, 1777712400000, 1777712405000,
		"/home/u/infra", "q-conv-2", second, 1777716000000, 1777716009000)
	db.Close()
	// Both conversations of conversations_v2 are sessions.
	res := importertest.ReadSessions(t, Format{}, dir, 2)
	s := importertest.Session(t, res, "q-conv-2")
	if s.Messages[0].Parts[0].Text != "Which stack is largest?" {
		t.Errorf("second conversation %+v", s.Messages[0].Parts)
	}
	if n, err := (Format{}).CountSessions(t.Context(), importer.SQLiteBundle(filepath.Join(dir, dbName))); n != 2 || err != nil {
		t.Errorf("counted %d, %v", n, err)
	}
	importertest.ImportsOnce(t, Format{}, dir, 2, 6)
}

// Kiro CLI's entries time the answer (request_metadata's
// stream_end_timestamp_ms, as agentsview's fixture of Kiro's database
// has it, kenn-io/agentsview at 538600744d1b87614d3746d36a0966c1f2ac1cad,
// internal/parser/testdata/kiro_sqlite/standard_payload.json): the
// reply is dated then, not at its prompt's time; an entry without it
// keeps the prompt's.
func TestReplyTimedByItsStream(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kiro-cli")
	db := importertest.SQLiteWriter(t, filepath.Join(dir, dbName))
	importertest.Exec(t, db, `CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT)`)
	importertest.Exec(t, db, `INSERT INTO conversations VALUES (?, ?)`, "/home/u/app", kiroConversation)
	db.Close()
	_, s := importertest.ReadValidFor(t, Format{}, dir, "kiro-conv")
	if importertest.Roles(s) != "user assistant user assistant" {
		t.Fatalf("roles %s", importertest.Roles(s))
	}
	want := []string{"2026-05-17T10:00:00Z", "2026-05-17T10:00:10Z", "2026-05-17T10:00:20Z", "2026-05-17T10:00:20Z"}
	for i, m := range s.Messages {
		if got := m.CreatedAt.UTC().Format(time.RFC3339); got != want[i] {
			t.Errorf("message %d (%s) at %s, want %s", i, m.Role, got, want[i])
		}
	}
	if c := s.Messages[1].CompletedAt; c == nil || !c.Equal(s.Messages[1].CreatedAt) {
		t.Errorf("reply completed %v", c)
	}
}

const kiroConversation = `{"conversation_id":"kiro-conv","history":[
{"user":{"content":{"Prompt":{"prompt":"Build the parser"}},"timestamp":"2026-05-17T10:00:00Z"},
 "assistant":{"Response":{"message_id":"a1","content":"I can do that."}},
 "request_metadata":{"stream_end_timestamp_ms":1779012010000}},
{"user":{"content":{"Prompt":{"prompt":"Read the source first"}},"timestamp":"2026-05-17T10:00:20Z"},
 "assistant":{"Response":{"message_id":"a2","content":"Reading it."}}}]}`

// testdata's database holds both tables' conversations: Q's and Kiro
// CLI's (testdata/README.md).
func TestReadTestdata(t *testing.T) {
	res := importertest.ReadSessions(t, Format{}, "testdata", 2)
	importertest.Session(t, res, "q-conv-1")
	if s := importertest.Session(t, res, "kiro-conv"); s.Cwd != "/home/u/app" {
		t.Errorf("cwd %q", s.Cwd)
	}
}
