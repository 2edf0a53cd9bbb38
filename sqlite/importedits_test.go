package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/gemini"
)

// An import stores the edit index of the bodies it writes, leaving none
// marked for the catch-up, and what it stores is what the catch-up
// reads from the same bodies: the real session files of other agents
// (testdata/agent-sessions), imported, then their index made again the
// way a store's first loom blame made it before (every body with a tool
// call marked, fileedit.Index), give the same rows and the same Edits.
func TestImportStoresEdits(t *testing.T) {
	ctx := context.Background()
	st := tempStore(t)
	root := filepath.Join("..", "testdata", "agent-sessions")
	// Codex's and Gemini's samples under the names their tools give
	// session files, which their readers look for.
	dir := t.TempDir()
	for src, dst := range map[string]string{
		"codex/vibecodingtracker-codex.jsonl":   "codex/rollout-vibecodingtracker-codex.jsonl",
		"gemini/vibecodingtracker-gemini.jsonl": "gemini/chats/session-vibecodingtracker-gemini.jsonl",
	} {
		b, err := os.ReadFile(filepath.Join(root, src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, dst)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	im := &importer.Importer{Store: st, UserID: "u"}
	rep, err := im.Run(ctx, []importer.Target{
		{Format: claudecode.Format{}, Roots: []string{filepath.Join(root, "claude-code")}, Explicit: true},
		{Format: codex.Format{}, Roots: []string{filepath.Join(dir, "codex")}, Explicit: true},
		{Format: gemini.Format{}, Roots: []string{filepath.Join(dir, "gemini")}, Explicit: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rep.Tools {
		if tr.SessionsNew == 0 {
			t.Fatalf("%s: no session imported: %+v", tr.Tool, tr)
		}
	}
	db := st.DB()
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	toolBodies := count(`SELECT count(*) FROM bodies WHERE instr(parts, '"type":"tool"') > 0`)
	if toolBodies == 0 {
		t.Fatal("the samples hold no tool call")
	}
	if n := count(`SELECT count(*) FROM edits_pending`); n != 0 {
		t.Errorf("%d bodies marked after the import, want none (%d hold tool calls)", n, toolBodies)
	}
	if n, err := fileedit.Index(ctx, st); err != nil || n != 0 {
		t.Errorf("the catch-up read %d bodies after the import (%v), want none", n, err)
	}
	// Every session's edits, the way loom blame reads them, and the
	// index's rows themselves.
	rows, err := db.QueryContext(ctx, `SELECT id FROM sessions ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var sessions []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	read := func() (map[string][]loom.FileEdit, [][]any) {
		t.Helper()
		edits := map[string][]loom.FileEdit{}
		for _, id := range sessions {
			es, err := st.Edits(ctx, loom.EditQuery{UserID: "u", SessionID: id, Parts: true})
			if err != nil {
				t.Fatal(err)
			}
			edits[id] = es
		}
		rows, err := db.QueryContext(ctx, `SELECT body_id, n, part_id, tool, op, path, from_path, lines FROM edits ORDER BY body_id, n`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var all [][]any
		for rows.Next() {
			var body, n int64
			var part, tool, op, path, from string
			var lines []byte
			if err := rows.Scan(&body, &n, &part, &tool, &op, &path, &from, &lines); err != nil {
				t.Fatal(err)
			}
			all = append(all, []any{body, n, part, tool, op, path, from, lines})
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return edits, all
	}
	imported, importedRows := read()
	if len(importedRows) == 0 {
		t.Fatal("the import stored no edits")
	}
	relative := 0
	for _, es := range imported {
		for _, e := range es {
			if !filepath.IsAbs(e.Path) {
				relative++
			}
		}
	}
	// The index made again from the bodies, as schema.md tells.
	if _, err := db.ExecContext(ctx, `DELETE FROM edits`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT OR IGNORE INTO edits_pending (body_id)
		SELECT id FROM bodies WHERE instr(parts, '"type":"tool"') > 0`); err != nil {
		t.Fatal(err)
	}
	n, err := fileedit.Index(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if n != toolBodies {
		t.Fatalf("the catch-up read %d bodies, want %d", n, toolBodies)
	}
	caughtUp, caughtUpRows := read()
	if !reflect.DeepEqual(importedRows, caughtUpRows) {
		t.Errorf("the import stored %d edit rows, the catch-up %d, not the same:\nimport   %v\ncatch-up %v",
			len(importedRows), len(caughtUpRows), importedRows, caughtUpRows)
	}
	for _, id := range sessions {
		if !reflect.DeepEqual(imported[id], caughtUp[id]) {
			t.Errorf("session %s: Edits after the import\n%+v\nafter the catch-up\n%+v", id, imported[id], caughtUp[id])
		}
	}
	t.Logf("%d sessions, %d bodies with tool calls, %d edits (%d with a relative path)", len(sessions), toolBodies, len(importedRows), relative)
}
