package amazonq

import (
	"path/filepath"
	"testing"

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
	res := importertest.ReadAll(t, Format{}, dir)
	importertest.CheckValidOf(t, Tool, res)
	s := importertest.Session(t, res, "q-conv-1")
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
