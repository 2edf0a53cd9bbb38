package devin

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// The tables and columns of Devin's database that agentsview's reader
// of it reads (wesm/agentsview at
// a5de5daca0005d2794f6fe8e0412795cb2873e4b, internal/parser/devin.go).
const schema = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT, working_directory TEXT, model TEXT, created_at INTEGER,
  last_activity_at INTEGER, hidden INTEGER DEFAULT 0, main_chain_id INTEGER);
CREATE TABLE message_nodes (row_id INTEGER PRIMARY KEY AUTOINCREMENT, node_id INTEGER NOT NULL, parent_node_id INTEGER,
  session_id TEXT NOT NULL, chat_message TEXT NOT NULL, created_at INTEGER NOT NULL);`

func build(t *testing.T, dir string) {
	db := importertest.SQLiteWriter(t, filepath.Join(dir, dbName))
	defer db.Close()
	importertest.Exec(t, db, schema)
	importertest.Exec(t, db, `INSERT INTO sessions VALUES
	  ('ses_1', 'Fix the flaky test', '/home/u/svc', 'claude-sonnet-4.5', 1790000000, 1790000090, 0, 6),
	  ('ses_hidden', 'internal', '/home/u', 'x', 1790000100, 1790000100, 1, NULL),
	  ('ses_2', NULL, '/home/u/other', 'gpt-5', 1790000200, 1790000210, 0, NULL)`)
	nodes := [][]any{
		{1, nil, "ses_1", `{"role":"system","content":"You are Devin."}`, 1790000000},
		{2, 1, "ses_1", `{"role":"user","content":"Why is TestRetry flaky?"}`, 1790000001},
		// A reply retried: node 3 is the branch left behind.
		{3, 2, "ses_1", `{"role":"assistant","content":"It sleeps.","metadata":{"metrics":{"input_tokens":900,"output_tokens":5}}}`, 1790000010},
		{4, 2, "ses_1", `{"role":"assistant","content":[{"type":"thinking","thinking":"Look at the test first."}],"tool_calls":[{"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"retry_test.go\"}"}}],"metadata":{"generation_model":"claude-sonnet-4-5-20250929","metrics":{"input_tokens":1000,"output_tokens":30,"cache_read_tokens":400,"cache_creation_tokens":50}}}`, 1790000020},
		{5, 4, "ses_1", `{"role":"tool","tool_call_id":"call_a","content":"time.Sleep(10 * time.Millisecond)"}`, 1790000021},
		{6, 5, "ses_1", `{"role":"assistant","content":[{"type":"text","text":"It waits on a fixed sleep; wait on the event instead."}],"metadata":{"metrics":{"input_tokens":1200,"output_tokens":14,"cache_read_tokens":1300}}}`, 1790000030},
		{1, nil, "ses_2", `{"role":"user","content":"hello"}`, 1790000200},
		{2, 1, "ses_2", `{"role":"assistant","content":"Hi.","metadata":{"metrics":{"input_tokens":10,"output_tokens":2}}}`, 1790000201},
		{3, 2, "ses_2", `{not json`, 1790000202},
	}
	for _, n := range nodes {
		importertest.Exec(t, db, `INSERT INTO message_nodes (node_id, parent_node_id, session_id, chat_message, created_at) VALUES (?, ?, ?, ?, ?)`, n...)
	}
}

// The session's main chain, from main_chain_id back to the root: the
// retried reply is left out; the system prompt is skipped; a
// read_file call with thinking is completed by the tool node; each
// reply's usage its call's. A hidden session is not read; a session
// without a main chain is all its nodes, a broken one a problem.
func TestRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cli")
	build(t, dir)
	res := importertest.ReadAllValid(t, Format{}, dir)
	if len(res.Sessions) != 2 || res.Skipped["hidden-session"] != 1 {
		t.Fatalf("%d sessions, skipped %v", len(res.Sessions), res.Skipped)
	}
	s := importertest.Session(t, res, "ses_1")
	if got := importertest.Roles(s); got != "user assistant assistant" || s.Title != "Fix the flaky test" || s.Cwd != "/home/u/svc" {
		t.Fatalf("session %s %q %q", got, s.Title, s.Cwd)
	}
	p := s.Messages[1].Parts
	if len(p) != 2 || p[0].Type != loom.PartReasoning || p[1].Name != "read_file" || p[1].Status != loom.ToolCompleted ||
		!strings.Contains(string(p[1].Output), "time.Sleep") || string(p[1].Input) != `{"path":"retry_test.go"}` {
		t.Errorf("call %+v", p)
	}
	if u := s.Messages[1].Usage; u.InputTokens != 1000 || u.CacheReadTokens != 400 || u.CacheWriteTokens != 50 || u.APICalls != 1 ||
		s.Messages[1].Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("usage %+v %s", u, s.Messages[1].Model)
	}
	for _, m := range s.Messages {
		if strings.Contains(importer.Text(m.Parts), "It sleeps") {
			t.Error("the retried reply is in the main chain")
		}
	}
	other := importertest.Session(t, res, "ses_2")
	if importertest.Roles(other) != "user assistant" || len(res.Problems) != 1 {
		t.Errorf("second session %s, problems %v", importertest.Roles(other), res.Problems)
	}
	if n, err := (Format{}).CountSessions(t.Context(), importer.SQLiteBundle(filepath.Join(dir, dbName))); n != 2 || err != nil {
		t.Errorf("counted %d, %v", n, err)
	}
	importertest.ImportsOnce(t, Format{}, dir, 2, 5)
	importertest.RefusesOtherDB(t, Format{}, dbName)
}
