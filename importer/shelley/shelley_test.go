package shelley

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// The tables' columns Shelley reads and writes (boldsoftware/shelley at
// a38c350249816325ff2ed9c852d2cc102b56dbc9, db/generated/models.go),
// not its migrations.
const schema = `
CREATE TABLE conversations (conversation_id TEXT PRIMARY KEY, slug TEXT, user_initiated BOOLEAN NOT NULL DEFAULT TRUE,
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
  cwd TEXT, archived BOOLEAN NOT NULL DEFAULT FALSE, parent_conversation_id TEXT, model TEXT, current_generation INTEGER NOT NULL DEFAULT 1);
CREATE TABLE messages (message_id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL, sequence_id INTEGER NOT NULL, type TEXT NOT NULL,
  llm_data TEXT, user_data TEXT, usage_data TEXT, created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, display_data TEXT,
  excluded_from_context BOOLEAN NOT NULL DEFAULT FALSE, generation INTEGER NOT NULL DEFAULT 1, llm_api_url TEXT, model_name TEXT);`

func text(s string) string { return `{"ID":"","Type":2,"Text":` + quote(s) + `}` }
func quote(s string) string {
	return `"` + strings.NewReplacer(`"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// build writes a Shelley database of a conversation that runs a shell
// command (which fails) and a sub-agent, and the sub-agent's own
// conversation, into dir.
func build(t *testing.T, dir string) {
	db := importertest.SQLiteWriter(t, filepath.Join(dir, dbName))
	defer db.Close()
	importertest.Exec(t, db, schema)
	importertest.Exec(t, db, `INSERT INTO conversations (conversation_id, slug, created_at, updated_at, cwd, parent_conversation_id, model) VALUES
	  ('cXYZ1', 'fix-the-build', '2026-08-20 10:00:00', '2026-08-20 10:05:00', '/home/u/app', NULL, 'claude-sonnet-4-5'),
	  ('cSUB2', NULL, '2026-08-20 10:02:00', '2026-08-20 10:03:00', '/home/u/app', 'cXYZ1', 'claude-haiku-4-5')`)
	use := func(in, read, out int, cost string) string {
		return `{"input_tokens":` + itoa(in) + `,"cache_creation_input_tokens":0,"cache_read_input_tokens":` + itoa(read) +
			`,"output_tokens":` + itoa(out) + `,"cost_usd":` + cost + `,"model":"claude-sonnet-4-5-20250929"}`
	}
	msgs := [][]any{
		{"m1", "cXYZ1", 1, "user", `{"Role":0,"Content":[` + text("Why does the build fail?") + `],"EndOfTurn":false}`, nil, "2026-08-20 10:00:01"},
		{"m2", "cXYZ1", 2, "agent", `{"Role":1,"Content":[{"ID":"","Type":3,"Thinking":"Build it first."},` + text("Let me build it.") +
			`,{"ID":"toolu_1","Type":5,"ToolName":"bash","ToolInput":{"command":"go build ./..."}}],"EndOfTurn":false}`, use(1000, 200, 40, "0.012"), "2026-08-20 10:00:05"},
		{"m3", "cXYZ1", 3, "user", `{"Role":0,"Content":[{"ID":"","Type":6,"ToolUseID":"toolu_1","ToolError":true,"ToolResult":[` +
			text("main.go:3: undefined: x") + `],"ToolUseEndTime":"2026-08-20T10:00:07Z"}],"EndOfTurn":false}`, nil, "2026-08-20 10:00:07"},
		{"m4", "cXYZ1", 4, "agent", `{"Role":1,"Content":[{"ID":"toolu_2","Type":5,"ToolName":"subagent","ToolInput":{"slug":"find-x","prompt":"Where did x go?"}}],"EndOfTurn":false}`,
			use(1300, 1100, 25, "0.008"), "2026-08-20 10:01:59"},
		{"m5", "cXYZ1", 5, "user", `{"Role":0,"Content":[{"ID":"","Type":6,"ToolUseID":"toolu_2","ToolResult":[` + text("x was removed from a.go") + `]}],"EndOfTurn":false}`,
			nil, "2026-08-20 10:03:01"},
		{"m6", "cXYZ1", 6, "agent", `{"Role":1,"Content":[` + text("x was removed from a.go; restore it.") + `],"EndOfTurn":true}`, use(1500, 1300, 12, "0.006"), "2026-08-20 10:03:05"},
		{"m7", "cXYZ1", 7, "gitinfo", nil, nil, "2026-08-20 10:03:06"},
		{"m8", "cXYZ1", 8, "slug", `{"Role":1,"Content":[` + text("fix-the-build") + `]}`, use(300, 0, 4, "0.001"), "2026-08-20 10:00:03"},
		{"m9", "cXYZ1", 9, "agent", `{not json`, nil, "2026-08-20 10:04:00"},
		{"s1", "cSUB2", 1, "user", `{"Role":0,"Content":[` + text("Where did x go?") + `]}`, nil, "2026-08-20 10:02:00"},
		{"s2", "cSUB2", 2, "agent", `{"Role":1,"Content":[` + text("x was removed from a.go") + `],"EndOfTurn":true}`, use(800, 0, 10, "0.002"), "2026-08-20 10:02:30"},
	}
	for _, m := range msgs {
		importertest.Exec(t, db, `INSERT INTO messages (message_id, conversation_id, sequence_id, type, llm_data, usage_data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, m...)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// The conversation: a prompt; thinking, text and a bash call that
// failed, with its usage; a sub-agent's call and its result; the
// answer. Its sub-agent's conversation is a sub-agent session of it.
// The git info, the slug's call and a message that is not JSON are
// no messages (the last a problem).
func TestRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shelley")
	build(t, dir)
	res, s := importertest.ReadValidFor(t, Format{}, dir, "cXYZ1")
	if got := importertest.Roles(s); got != "user assistant assistant assistant" || s.Title != "fix-the-build" || s.Cwd != "/home/u/app" {
		t.Fatalf("session %s %q %q", got, s.Title, s.Cwd)
	}
	p := s.Messages[1].Parts
	if len(p) != 3 || p[0].Type != loom.PartReasoning || p[2].Name != "bash" || p[2].Status != loom.ToolError || !strings.Contains(p[2].Error, "undefined: x") {
		t.Errorf("first reply %+v", p)
	}
	if u := s.Messages[1].Usage; u.InputTokens != 1000 || u.CacheReadTokens != 200 || u.OutputTokens != 40 || u.APICalls != 1 || s.Messages[1].Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("usage %+v %s", u, s.Messages[1].Model)
	}
	if c := s.Messages[2].Parts[0]; c.Name != "subagent" || c.Status != loom.ToolCompleted || !strings.Contains(string(c.Output), "a.go") {
		t.Errorf("sub-agent call %+v", c)
	}
	sub := importertest.Session(t, res, "cSUB2")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != "cXYZ1" || importertest.Roles(sub) != "user assistant" {
		t.Errorf("sub-agent %+v", sub)
	}
	if len(res.Problems) != 1 || res.Skipped["gitinfo"] != 1 || res.Skipped["slug-call"] != 1 {
		t.Errorf("problems %v, skipped %v", res.Problems, res.Skipped)
	}
	if n, err := (Format{}).CountSessions(t.Context(), importer.SQLiteBundle(filepath.Join(dir, dbName))); n != 2 || err != nil {
		t.Errorf("counted %d, %v", n, err)
	}
	importertest.ImportsOnce(t, Format{}, dir, 2, 6)
	importertest.RefusesOtherDB(t, Format{}, dbName)
}

// $SHELLEY_DB names the database.
func TestRoots(t *testing.T) {
	got := Format{}.Roots(importertest.Getenv("SHELLEY_DB", "/x/s.db"), "/home/u")
	if len(got) != 1 || got[0] != "/x/s.db" {
		t.Errorf("roots %v", got)
	}
}
