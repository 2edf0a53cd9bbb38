package openclaw

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/db/events.jsonl is the transcript events OpenClaw 2026.9.6
// (`openclaw agent --local`, offline against a fake model, as
// TestImportRealOpenClaw in cli/session runs it) kept in its agent's
// openclaw-agent.sqlite, each with its session window and sequence
// number, the home directory renamed /home/u: a prompt answered with
// reasoning, and a second whose reply reads a file with reasoning.
func writeDB(t *testing.T, path string, packed bool) {
	t.Helper()
	db := importertest.SQLiteWriter(t, path)
	defer db.Close()
	// The columns of OpenClaw's tables that the reader reads.
	importertest.Exec(t, db, `CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL,
		previous_session_id TEXT, reason TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
		parent_session_key TEXT, spawned_by TEXT, display_name TEXT) STRICT`)
	importertest.Exec(t, db, `CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
		created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, PRIMARY KEY (session_id, seq)) STRICT`)
	f, err := os.Open(filepath.Join("testdata", "db", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, _ := zstd.NewWriter(nil)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			SessionID  string          `json:"session_id"`
			SessionKey string          `json:"session_key"`
			Window     int64           `json:"window_created_at"`
			Seq        int64           `json:"seq"`
			Created    int64           `json:"created_at"`
			Event      json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		importertest.Exec(t, db, `INSERT OR IGNORE INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?, ?, ?, ?)`,
			e.SessionID, e.SessionKey, e.Window, e.Window)
		if packed && e.Seq%2 == 1 {
			// OpenClaw keeps a large event compressed.
			importertest.Exec(t, db, `INSERT INTO transcript_events (session_id, seq, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES (?, ?, ?, ?, ?, '{}')`,
				e.SessionID, e.Seq, e.Created, enc.EncodeAll(e.Event, nil), len(e.Event))
			continue
		}
		importertest.Exec(t, db, `INSERT INTO transcript_events (session_id, seq, created_at, event_json) VALUES (?, ?, ?, ?)`,
			e.SessionID, e.Seq, e.Created, string(e.Event))
	}
}

// OpenClaw's database: each session window a session, read from its
// events (plain or compressed) by pi's reader.
func TestReadDB(t *testing.T) {
	root := t.TempDir()
	writeDB(t, filepath.Join(root, "main", "agent", dbName), true)
	res := importertest.ReadAllValid(t, Format{}, root)
	if len(res.Sessions) != 1 || len(res.Problems) != 0 {
		t.Fatalf("%d sessions, problems %v", len(res.Sessions), res.Problems)
	}
	s := importertest.Session(t, res, "46716943-f902-4163-881a-85429324bd13")
	var prompts []string
	for _, m := range s.Messages {
		if m.Role == loom.RoleUser {
			prompts = append(prompts, m.Text())
		}
	}
	if want := []string{"Say hello in one line.", "What is in notes.txt?"}; !slices.Equal(prompts, want) || s.Cwd != "/home/u/work" {
		t.Errorf("prompts %q in %q", prompts, s.Cwd)
	}
	var u loom.Usage
	for _, m := range s.Messages {
		u.Add(m.Usage)
	}
	if tl := importertest.TallyOf(s); tl.Reasoning != 3 || tl.Tools[loom.ToolCompleted] != 1 || u.ReasoningTokens != 28 || u.CacheReadTokens != 500 || u.APICalls != 3 {
		t.Errorf("%+v, usage %+v", tl, u)
	}
}

// KimiClaw, the OpenClaw the Kimi desktop app runs, keeps OpenClaw's
// state in ~/.kimi_openclaw (openclaw.json, workspace/, agents/), where
// an import with no PATH finds its sessions.
func TestKimiClawState(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, ".kimi_openclaw", "agents")
	if !slices.Contains(Format{}.Roots(nil, home), root) {
		t.Fatalf("roots %v lack %s", Format{}.Roots(nil, home), root)
	}
	writeDB(t, filepath.Join(root, "main", "agent", dbName), false)
	res := importertest.ReadAllValid(t, Format{}, root)
	if len(res.Sessions) != 1 || len(res.Problems) != 0 {
		t.Fatalf("%d sessions, problems %v", len(res.Sessions), res.Problems)
	}
	importertest.Session(t, res, "46716943-f902-4163-881a-85429324bd13")
}

func TestImportAndFollowDB(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "main", "agent", dbName)
	writeDB(t, path, false)
	importertest.ImportsOnce(t, Format{}, root, 1, 5)
	importertest.Follows(t, Format{}, root, func() {
		db := importertest.SQLiteWriter(t, path)
		defer db.Close()
		importertest.Exec(t, db, `INSERT INTO transcript_events (session_id, seq, created_at, event_json) VALUES (?, 13, 1795700600000, ?)`,
			"46716943-f902-4163-881a-85429324bd13",
			`{"type":"message","id":"later-1","parentId":"eb03b1a4-a28e-4786-aaf2-e85bbbf4ef31","timestamp":"2026-11-26T14:00:00.000Z","message":{"role":"user","content":"Thanks","timestamp":1795700600000}}`)
	}, 1)
}

// A compaction OpenClaw keeps in its database (pi's compaction entry,
// as `openclaw sessions compact` writes it among the transcript events)
// is a summary message counting one compaction; the call that made its
// summary is recorded nowhere.
func TestCompactionInDB(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "main", "agent", dbName)
	writeDB(t, path, false)
	db := importertest.SQLiteWriter(t, path)
	importertest.Exec(t, db, `INSERT INTO transcript_events (session_id, seq, created_at, event_json) VALUES (?, 13, 1795700600000, ?), (?, 14, 1795700601000, ?)`,
		"46716943-f902-4163-881a-85429324bd13",
		`{"type":"compaction","id":"cmp-1","parentId":"eb03b1a4-a28e-4786-aaf2-e85bbbf4ef31","timestamp":"2026-11-26T14:00:00.000Z","summary":"The user had a greeting and read notes.txt.","firstKeptEntryId":"eb03b1a4-a28e-4786-aaf2-e85bbbf4ef31","tokensBefore":3400}`,
		"46716943-f902-4163-881a-85429324bd13",
		`{"type":"message","id":"later-1","parentId":"cmp-1","timestamp":"2026-11-26T14:00:01.000Z","message":{"role":"user","content":"Thanks","timestamp":1795700601000}}`)
	db.Close()
	_, s := importertest.ReadValidFor(t, Format{}, root, "46716943-f902-4163-881a-85429324bd13")
	k := importertest.Message(t, s, "cmp-1")
	if k.Role != loom.RoleSummary || k.Usage.Compactions != 1 || k.Usage.APICalls != 0 {
		t.Errorf("compaction %s %+v", k.Role, k.Usage)
	}
}
