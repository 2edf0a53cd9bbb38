package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// handoffHome is a home whose opencode data directory holds the
// database opencode 1.18.33 wrote (testdata), as opencode leaves it once
// it has run; it returns the home and the database's path.
func handoffHome(t *testing.T) (string, string) {
	t.Helper()
	data := importertest.ReadBytes(t, "testdata/real-1.18.33.db")
	home := t.TempDir()
	path := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	importertest.WriteFile(t, path, data, 0o600)
	return home, path
}

func handoffOf(home, dir string, at time.Time) *handoff.Handoff {
	call := loom.Part{Type: loom.PartTool, CallID: "c1", Name: "Bash", Status: loom.ToolCompleted,
		Input: json.RawMessage(`{"command":"go test ./..."}`), Output: json.RawMessage(`"ok"`)}
	return &handoff.Handoff{
		Session: &loom.Session{ID: "0196a3b2-0000-7000-8000-000000000001", Title: "Fix the flaky test"},
		Dir:     dir, Home: home, Now: at,
		Messages: []*loom.Message{
			// A prompt of February 2026, before the last wrap of
			// opencode's ids.
			{Role: loom.RoleUser, Turn: 1, CreatedAt: time.Date(2026, 2, 10, 22, 57, 54, 0, time.UTC), Parts: []loom.Part{{Type: loom.PartText, Text: "Why does it flake?"}}},
			// A reply dated later than the handoff (a clock ahead) still
			// sorts before what opencode adds.
			{Role: loom.RoleAssistant, Turn: 1, CreatedAt: at.Add(time.Hour), Parts: []loom.Part{
				{Type: loom.PartText, Text: "Running the tests."}, call, {Type: loom.PartText, Text: "They pass now."}}},
		},
	}
}

// TestHandoffOpencodeRows: a handoff adds one session to opencode's
// database, in the global project (or the repository's that opencode
// cached), its messages and parts with ids ascending as opencode orders
// them and none after the handoff's time, the reply split after its
// call's result, and the loom session in the session's metadata, which
// the import reads back.
func TestHandoffOpencodeRows(t *testing.T) {
	home, path := handoffHome(t)
	dir := filepath.Join(home, "src", "api")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	out, err := Format{}.Handoff(context.Background(), handoffOf(home, dir, at))
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != path || !strings.HasPrefix(out.SessionID, "ses_") || out.Resume != "cd "+dir+" && opencode --session "+out.SessionID || out.ToolCalls != 1 {
		t.Errorf("handed %+v", out)
	}
	db, err := sql.Open(driverName, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var project, meta, title string
	if err := db.QueryRow("SELECT project_id, metadata, title FROM session WHERE id = ?", out.SessionID).Scan(&project, &meta, &title); err != nil {
		t.Fatal(err)
	}
	if project != "global" || title != "Fix the flaky test" || !strings.Contains(meta, `"loomHandoff":{"session_id":"0196a3b2-0000-7000-8000-000000000001","turn":1}`) {
		t.Errorf("session row: project %s, title %q, metadata %s", project, title, meta)
	}
	// In the order opencode takes them, by time then id, the prompt,
	// the reply up to its call, and what it said after; none dated
	// after now, none with an id after what opencode makes now (whose
	// ids wrap every two years: made from the messages' own times, the
	// ids of February 2026 would sort after those of November).
	var ids, texts []string
	var times []int64
	rows, err := db.Query(`SELECT m.id, m.time_created, (SELECT json_extract(p.data, '$.text') FROM part p WHERE p.message_id = m.id ORDER BY p.id LIMIT 1)
		FROM message m WHERE m.session_id = ? ORDER BY m.time_created, m.id`, out.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var created int64
		var text sql.NullString
		if err := rows.Scan(&id, &created, &text); err != nil {
			t.Fatal(err)
		}
		ids, times, texts = append(ids, id), append(times, created), append(texts, text.String)
	}
	rows.Close()
	later, _ := (&idMaker{last: time.Now().UnixMilli() + 1}).next("msg_")
	if strings.Join(texts, "|") != "Why does it flake?|Running the tests.|They pass now." || !sort.StringsAreSorted(ids) ||
		ids[len(ids)-1] >= later || times[len(times)-1] > time.Now().UnixMilli() {
		t.Errorf("messages %v, times %v, texts %q; opencode's next id %s", ids, times, texts, later)
	}
	for _, id := range ids {
		if len(id) != len("msg_")+26 {
			t.Errorf("id %q is not of opencode's form", id)
		}
	}
	res, err := Format{}.Read(context.Background(), importer.SQLiteBundle(path))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range res.Sessions {
		if s.SourceID != out.SessionID {
			continue
		}
		found = true
		if s.Origin == nil || s.Origin.Turn != 1 || s.Cwd != dir || len(s.Messages) != 3 {
			t.Errorf("read back %+v, origin %+v", s, s.Origin)
		}
	}
	if !found {
		t.Errorf("the import does not read session %s", out.SessionID)
	}

	// In a repository whose project opencode has recorded, the session
	// is that project's.
	if _, err := db.Exec("INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('0123abc', ?, 1, 1, '[]')", dir); err != nil {
		t.Fatal(err)
	}
	importertest.WriteFile(t, filepath.Join(dir, ".git", "opencode"), []byte("0123abc\n"), 0o600)
	out, err = Format{}.Handoff(context.Background(), handoffOf(home, filepath.Join(dir, "pkg"), at))
	if err != nil {
		t.Fatal(err)
	}
	var path2 string
	if err := db.QueryRow("SELECT project_id, path FROM session WHERE id = ?", out.SessionID).Scan(&project, &path2); err != nil || project != "0123abc" || path2 != "pkg" {
		t.Errorf("in a recorded repository: project %s, path %q, %v", project, path2, err)
	}
}

// TestHandoffOpencodeRefuses: no database (opencode has not run), or
// one of a schema the handoff does not know, is an error of one line,
// and nothing is written.
func TestHandoffOpencodeRefuses(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	home := t.TempDir()
	_, err := Format{}.Handoff(context.Background(), handoffOf(home, home, at))
	if err == nil || !strings.Contains(err.Error(), "opencode makes it when it first runs") || loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("without a database: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".local")); err == nil {
		t.Error("wrote without a database")
	}

	home, path := handoffHome(t)
	db, err := sql.Open(driverName, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var before int
	db.QueryRow("SELECT count(*) FROM session").Scan(&before)
	if _, err := db.Exec("ALTER TABLE session ADD COLUMN owner text NOT NULL DEFAULT ''"); err != nil {
		t.Fatal(err)
	}
	if _, err := (Format{}).Handoff(context.Background(), handoffOf(home, home, at)); err != nil {
		t.Errorf("a column with a default: %v", err)
	}
	if _, err := db.Exec("ALTER TABLE message DROP COLUMN time_updated"); err != nil {
		t.Fatal(err)
	}
	_, err = Format{}.Handoff(context.Background(), handoffOf(home, home, at))
	if err == nil || !strings.Contains(err.Error(), "of a schema this loom does not know (its message table has no time_updated column)") {
		t.Errorf("a schema without a column: %v", err)
	}
	var after int
	db.QueryRow("SELECT count(*) FROM session").Scan(&after)
	if after != before+1 {
		t.Errorf("%d sessions, then %d: want one more (the handoff before the schema changed)", before, after)
	}
}

// TestHandoffOpencodeIDs: ids grow, past 4,096 in a millisecond too; a
// session's id counts down, newest first.
func TestHandoffOpencodeIDs(t *testing.T) {
	m := &idMaker{last: 1000}
	var ids []string
	for range 5000 {
		id, err := m.next("msg_")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if !sort.StringsAreSorted(ids) || ids[0] == ids[1] {
		t.Errorf("ids %v… not ascending", ids[:3])
	}
	old, _ := m.session(time.UnixMilli(1000))
	newer, _ := m.session(time.UnixMilli(2000))
	if newer >= old {
		t.Errorf("session ids %s (later) and %s: the later should sort first", newer, old)
	}
}
