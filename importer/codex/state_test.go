package codex

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer/importertest"
)

// threadsTable is the threads table of Codex CLI 0.169's state_5.sqlite
// (its columns as its migrations leave them, without the indexes and
// triggers).
const threadsTable = `CREATE TABLE threads (
    id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    source TEXT NOT NULL, model_provider TEXT NOT NULL, cwd TEXT NOT NULL, title TEXT NOT NULL,
    sandbox_policy TEXT NOT NULL, approval_mode TEXT NOT NULL, tokens_used INTEGER NOT NULL DEFAULT 0,
    has_user_event INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0, archived_at INTEGER,
    git_sha TEXT, git_branch TEXT, git_origin_url TEXT, cli_version TEXT NOT NULL DEFAULT '',
    first_user_message TEXT NOT NULL DEFAULT '', agent_nickname TEXT, agent_role TEXT,
    memory_mode TEXT NOT NULL DEFAULT 'enabled', model TEXT, reasoning_effort TEXT, agent_path TEXT,
    created_at_ms INTEGER, updated_at_ms INTEGER, thread_source TEXT, preview TEXT NOT NULL DEFAULT '',
    recency_at INTEGER NOT NULL DEFAULT 0, recency_at_ms INTEGER NOT NULL DEFAULT 0,
    history_mode TEXT NOT NULL DEFAULT 'legacy', name TEXT, is_pinned INTEGER NOT NULL DEFAULT 0,
    thread_section_id TEXT, section_position INTEGER, section_entered_at_ms INTEGER, project_id TEXT,
    originator TEXT, daybreak_enabled BOOLEAN, creator_user_id TEXT, creator_account_id TEXT, attached_thread_parent_id TEXT)`

// TestHandoffRegistersThread: where Codex keeps its thread database (it
// has run on this machine), a handed-off rollout is registered in it
// under the configured model provider, newest, with the sandbox and
// approval settings of the thread before it, so that `codex resume
// --last` takes it; where there is none, none is made.
func TestHandoffRegistersThread(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".codex")
	os.MkdirAll(dir, 0o700)
	h := &handoff.Handoff{
		Session: &loom.Session{ID: "s", GitBranch: "main"}, Dir: "/home/dev/notes", Home: home, Env: func(string) string { return "" },
		Messages: []*loom.Message{
			{Role: loom.RoleUser, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: "How many files are here?"}}},
			{Role: loom.RoleAssistant, Turn: 1, Parts: []loom.Part{{Type: loom.PartText, Text: "Two."}}},
		},
	}
	if _, err := (Format{}).Handoff(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, stateDB)); !os.IsNotExist(err) {
		t.Fatalf("a state database was made where Codex had none: %v", err)
	}

	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("model = \"gpt-5.5\"\nprofile = \"work\"\n\n[profiles.work]\nmodel_provider = \"azure\"\n"), 0o600)
	db, err := sql.Open("sqlite", filepath.Join(dir, stateDB))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const sandbox = `{"type":"managed","network":"restricted"}`
	if _, err := db.Exec(threadsTable); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode, preview)
		VALUES ('019f0000-0000-7000-8000-000000000001', '/x.jsonl', 1795000000, 1795000000, 'cli', 'azure', '/home/dev/notes', 'earlier', ?, 'on-request', 'earlier')`, sandbox); err != nil {
		t.Fatal(err)
	}
	out := importertest.HandOff(t, Format{}, h)
	var path, provider, cwd, preview, first, policy, approval, branch string
	var userEvent int
	err = db.QueryRow(`SELECT rollout_path, model_provider, cwd, preview, first_user_message, sandbox_policy, approval_mode, git_branch, has_user_event
		FROM threads WHERE archived = 0 AND cwd = '/home/dev/notes' ORDER BY updated_at_ms DESC LIMIT 1`).
		Scan(&path, &provider, &cwd, &preview, &first, &policy, &approval, &branch, &userEvent)
	if err != nil {
		t.Fatal(err)
	}
	if path != out.Path || provider != "azure" || preview != "How many files are here?" || first != preview ||
		policy != sandbox || approval != "on-request" || branch != "main" || userEvent != 1 {
		t.Errorf("the newest thread: %s %s %s %q %q %s %s %s %d", path, provider, cwd, preview, first, policy, approval, branch, userEvent)
	}
}
