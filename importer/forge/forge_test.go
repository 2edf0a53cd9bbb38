package forge

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	mainID = "0199a1c2-7b1e-7f00-8000-00000000000a"
	subID  = "0199a1c2-7b1e-7f00-8000-00000000000b"
	oldID  = "0199a1c2-7b1e-7f00-8000-00000000000c"
)

// forgeDB builds a Forge directory whose .forge.db holds the
// conversations of testdata/contexts.json, in a table made as Forge's
// migrations make it, and one more whose context is not JSON.
func forgeDB(t *testing.T) string {
	t.Helper()
	data := importertest.ReadBytes(t, filepath.Join("testdata", "contexts.json"))
	var convs map[string]struct {
		Title     *string         `json:"title"`
		CreatedAt string          `json:"created_at"`
		UpdatedAt *string         `json:"updated_at"`
		Context   json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(data, &convs); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := importertest.SQLiteWriter(t, filepath.Join(dir, dbName))
	importertest.Exec(t, db, `CREATE TABLE conversations (
		conversation_id TEXT PRIMARY KEY NOT NULL,
		title TEXT,
		workspace_id BIGINT NOT NULL,
		context TEXT,
		created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
		updated_at TIMESTAMP)`)
	importertest.Exec(t, db, `ALTER TABLE conversations ADD COLUMN metrics TEXT`)
	for id, c := range convs {
		if _, err := db.Exec(`INSERT INTO conversations (conversation_id, title, workspace_id, context, created_at, updated_at) VALUES (?, ?, 7, ?, ?, ?)`,
			id, c.Title, string(c.Context), c.CreatedAt, c.UpdatedAt); err != nil {
			t.Fatal(err)
		}
	}
	importertest.Exec(t, db, `INSERT INTO conversations (conversation_id, workspace_id, context) VALUES ('broken', 7, '{not json'), ('none', 7, NULL)`)
	db.Close()
	return dir
}

func TestRoots(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	if got := (Format{}).Roots(env(""), "/home/u"); len(got) != 2 || got[0] != filepath.FromSlash("/home/u/forge") || got[1] != filepath.FromSlash("/home/u/.forge") {
		t.Errorf("roots %v", got)
	}
	if got := (Format{}).Roots(env("/cfg"), "/home/u"); len(got) != 1 || got[0] != "/cfg" {
		t.Errorf("roots with %s: %v", EnvConfig, got)
	}
}

// TestRead: each conversation is a session under Forge's id and title;
// a prompt is what the user typed, the system prompt and what Forge
// marks droppable are not prompts; replies keep their reasoning, text,
// calls completed by their results, and the provider's usage (Forge's
// estimates are not usage); a sub-agent's answer makes its conversation
// a sub-agent linked after the call; the earlier form without entries
// is read; a context that is not JSON is a problem of its own.
func TestRead(t *testing.T) {
	dir := forgeDB(t)
	res := importertest.ReadAllValid(t, Format{}, dir)
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Reason, "broken") {
		t.Errorf("problems %v", res.Problems)
	}
	// Forge's system prompts are system messages, no longer skipped.
	if res.Skipped["system"] != 0 || res.Skipped["usage:estimated"] != 1 || res.Skipped["attachment"] != 1 || res.Skipped["orphan-tool-result"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	main := importertest.SessionOf(t, Format{}, dir, mainID, "system user assistant assistant system user assistant assistant")
	if main.Title != "Read notes.txt" || main.Kind != loom.KindMain || main.Model != "gpt-fake" {
		t.Errorf("session %+v", main)
	}
	if got := main.Messages[0].Text(); got != "You are Forge, an expert software engineering assistant." {
		t.Errorf("system prompt %q", got)
	}
	main.Messages = main.Messages[1:] // the conversation
	if got := main.Messages[0].Text(); got != "What is in notes.txt?" {
		t.Errorf("prompt %q", got)
	}
	read := main.Messages[1]
	if p := read.Parts; len(p) != 3 || p[0].Type != loom.PartReasoning || p[0].Text != "The user wants the file." || p[1].Text != "I will read it." ||
		p[2].Name != "read" || p[2].Status != loom.ToolCompleted || string(p[2].Output) != `"alpha\nbeta\n"` {
		t.Errorf("the read %+v", p)
	}
	if u := read.Usage; u.InputTokens != 1000 || u.CacheReadTokens != 300 || u.OutputTokens != 40 || u.CostUSD != 0.0123 {
		t.Errorf("usage %+v", u)
	}
	var agent *loom.Part
	for i, p := range main.Messages[5].Parts {
		if p.Type == loom.PartAgent {
			agent = &main.Messages[5].Parts[i]
		}
	}
	if agent == nil || agent.SessionID != subID || main.Messages[5].Parts[0].Status != loom.ToolCompleted || string(main.Messages[5].Parts[0].Output) != `"Two lines."` {
		t.Errorf("the sub-agent's call %+v", main.Messages[5].Parts)
	}
	sub := importertest.SessionOf(t, Format{}, dir, subID, "system user assistant")
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != mainID || sub.Messages[2].Usage != (loom.Usage{}) {
		t.Errorf("sub-agent %+v", sub)
	}
	if res.Sessions[0].SourceID == subID || res.Sessions[1].SourceID == subID && res.Sessions[0].SourceID != mainID {
		t.Errorf("the sub-agent comes before its parent")
	}
	old := importertest.SessionOf(t, Format{}, dir, oldID, "user assistant")
	if old.Messages[1].Text() != "Hello there." || old.Model != "claude-sonnet-4" || !old.CreatedAt.Equal(stamp("2025-06-01 09:00:00")) {
		t.Errorf("the earlier form %+v", old)
	}

	if n, err := (Format{}).CountSessions(t.Context(), importer.SQLiteBundle(filepath.Join(dir, dbName))); n != 4 || err != nil {
		t.Errorf("counted %d, %v; want the 4 conversations with a context", n, err)
	}
	importertest.ImportsOnce(t, Format{}, dir, 3, 13)
	importertest.RefusesOtherDB(t, Format{}, dbName)
}
