package hermes

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// writeState writes a state.db as Hermes's current source makes it
// (SCHEMA_SQL of hermes_state_common.py in NousResearch/hermes-agent at
// 00704d087b7ca25039be87baf11706d01f4da355; the columns the reader
// reads): a CLI session of two prompts, a reply with reasoning and a
// terminal call, its totals; a sub-agent it delegated to; and the
// session a compression continued it in, which starts with the summary.
func writeState(t *testing.T, home string) string {
	t.Helper()
	path := filepath.Join(home, dbName)
	db := importertest.SQLiteWriter(t, path)
	defer db.Close()
	importertest.Exec(t, db, `CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, parent_session_id TEXT,
		started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
		output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
		reasoning_tokens INTEGER DEFAULT 0, cwd TEXT, git_branch TEXT, estimated_cost_usd REAL, actual_cost_usd REAL,
		title TEXT, api_call_count INTEGER DEFAULT 0, model_config TEXT)`)
	importertest.Exec(t, db, `CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
		role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL,
		token_count INTEGER, finish_reason TEXT, reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT,
		_compressed_summary INTEGER NOT NULL DEFAULT 0, active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0)`)
	importertest.Exec(t, db, `INSERT INTO sessions (id, source, model, started_at, ended_at, end_reason, input_tokens, output_tokens,
		cache_read_tokens, reasoning_tokens, cwd, git_branch, title, api_call_count) VALUES
		('20261101_090000_aa11bb22', 'cli', 'hermes-4-405b', 1793523600, 1793523700, 'compression', 5200, 140, 1800, 30, '/home/u/app', 'main', 'Disk usage', 3),
		('20261101_090030_cc33dd44', 'tool', 'hermes-4-70b', 1793523630, 1793523640, NULL, 900, 20, 0, 0, '/home/u/app', NULL, NULL, 1),
		('20261101_090200_ee55ff66', 'cli', 'hermes-4-405b', 1793523720, NULL, NULL, 1100, 12, 0, 0, '/home/u/app', 'main', 'Disk usage', 1)`)
	importertest.Exec(t, db, `UPDATE sessions SET parent_session_id = '20261101_090000_aa11bb22' WHERE id <> '20261101_090000_aa11bb22'`)
	importertest.Exec(t, db, `UPDATE sessions SET model_config = '{"_delegate_from":"20261101_090000_aa11bb22"}' WHERE id = '20261101_090030_cc33dd44'`)
	importertest.Exec(t, db, `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, timestamp, reasoning, _compressed_summary, active, compacted) VALUES
		('20261101_090000_aa11bb22', 'user', 'How full is the disk?', NULL, NULL, 1793523601, NULL, 0, 0, 1),
		('20261101_090000_aa11bb22', 'assistant', '', NULL, '[{"id":"call_df","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"df -h /\"}"}}]', 1793523602, 'Check with df.', 0, 0, 1),
		('20261101_090000_aa11bb22', 'tool', '/dev/sda1 40G 12G', 'call_df', NULL, 1793523603, NULL, 0, 0, 1),
		('20261101_090000_aa11bb22', 'assistant', 'The disk is 30% full.', NULL, NULL, 1793523604, NULL, 0, 0, 1),
		('20261101_090000_aa11bb22', 'user', 'Ask a helper for the largest directory.', NULL, NULL, 1793523620, NULL, 0, 0, 1),
		('20261101_090000_aa11bb22', 'assistant', '', NULL, '[{"id":"call_dt","type":"function","function":{"name":"delegate_task","arguments":"{\"goal\":\"Find the largest directory under /home/u/app.\"}"}}]', 1793523625, NULL, 0, 0, 1),
		('20261101_090000_aa11bb22', 'tool', '{"results":[{"summary":"node_modules, 1.2G."}]}', 'call_dt', NULL, 1793523640, NULL, 0, 0, 1),
		('20261101_090030_cc33dd44', 'user', 'Find the largest directory under /home/u/app.', NULL, NULL, 1793523631, NULL, 0, 1, 0),
		('20261101_090030_cc33dd44', 'assistant', 'node_modules, 1.2G.', NULL, NULL, 1793523639, NULL, 0, 1, 0),
		('20261101_090000_aa11bb22', 'assistant', 'The helper says node_modules.', NULL, NULL, 1793523650, NULL, 0, 0, 1),
		('20261101_090000_aa11bb22', 'user', 'a draft the user rewound', NULL, NULL, 1793523660, NULL, 0, 0, 0),
		('20261101_090200_ee55ff66', 'user', '[CONTEXT COMPACTION] The user checked the disk and had a helper find the largest directory.', NULL, NULL, 1793523720, NULL, 1, 1, 0),
		('20261101_090200_ee55ff66', 'user', 'Thanks, anything else?', NULL, NULL, 1793523721, NULL, 0, 1, 0),
		('20261101_090200_ee55ff66', 'assistant', 'Nothing else.', NULL, NULL, 1793523722, NULL, 0, 1, 0)`)
	return path
}

// Hermes's state.db, which its source calls canonical: each session
// with its messages (those still shown), reasoning, calls completed by
// their tool messages, its totals on its last reply; a delegated session
// a sub-agent; a compression's continuation a session whose first
// message is the summary. A transcript the database does not hold is
// read beside it.
func TestReadState(t *testing.T) {
	home := t.TempDir()
	writeState(t, home)
	data := importertest.ReadBytes(t, file)
	importertest.MkdirAll(t, filepath.Join(home, "sessions"))
	importertest.WriteFile(t, filepath.Join(home, "sessions", filepath.Base(file)), data, 0o644)
	res, s := importertest.ReadSession(t, Format{}, home, 4, "20261101_090000_aa11bb22", "user assistant assistant user assistant assistant")
	if s.Title != "Disk usage" || s.Cwd != "/home/u/app" {
		t.Fatalf("session %q %q", s.Title, s.Cwd)
	}
	if p := s.Messages[1].Parts; p[0].Type != loom.PartReasoning || p[1].Name != "terminal" || p[1].Status != loom.ToolCompleted {
		t.Errorf("reply %+v", p)
	}
	if u := s.Messages[5].Usage; u.InputTokens != 5200 || u.CacheReadTokens != 1800 || u.OutputTokens != 140 || u.APICalls != 3 {
		t.Errorf("usage %+v", u)
	}
	if sub := importertest.Session(t, res, "20261101_090030_cc33dd44"); sub.Kind != loom.KindSubagent || sub.ParentSourceID != s.SourceID {
		t.Errorf("delegated session %s of %q", sub.Kind, sub.ParentSourceID)
	}
	if c := importertest.Session(t, res, "20261101_090200_ee55ff66"); importertest.Roles(c) != "summary user assistant" {
		t.Errorf("continuation %s", importertest.Roles(c))
	}
	importertest.Session(t, res, "20260403_153620_5a3e2ff1")
}

func TestImportAndFollowState(t *testing.T) {
	home := t.TempDir()
	path := writeState(t, home)
	importertest.ImportsOnce(t, Format{}, home, 3, 11)
	importertest.Follows(t, Format{}, home, func() {
		db := importertest.SQLiteWriter(t, path)
		defer db.Close()
		importertest.Exec(t, db, `INSERT INTO messages (session_id, role, content, timestamp) VALUES ('20261101_090200_ee55ff66', 'user', 'One more.', 1793523800)`)
	}, 1)
}

// A session continued after a compression (its parent ended so, and it
// is no branch, reset or delegated run) is linked to the session it
// continues; a delegate_task call gets an agent part naming the
// sub-agent session it ran.
func TestStateLinks(t *testing.T) {
	home := t.TempDir()
	writeState(t, home)
	res := importertest.ReadAllValid(t, Format{}, home)
	if c := importertest.Session(t, res, "20261101_090200_ee55ff66"); c.Kind != loom.KindFork || c.ParentSourceID != "20261101_090000_aa11bb22" {
		t.Errorf("continuation %s of %q, want a fork of the session it continues", c.Kind, c.ParentSourceID)
	}
	s := importertest.Session(t, res, "20261101_090000_aa11bb22")
	var agent *loom.Part
	for _, m := range s.Messages {
		for i, p := range m.Parts {
			if p.Type == loom.PartAgent {
				agent = &m.Parts[i]
			}
		}
	}
	if agent == nil || agent.SessionID != "20261101_090030_cc33dd44" || agent.Name != "delegate_task" {
		t.Errorf("delegate_task's agent part %+v, want one naming the sub-agent", agent)
	}
}

// An in-place compaction archives the rows it summarised (active 0,
// compacted 1) and writes the tail it keeps again as new rows at the
// same times, which Hermes shows once (display_identity): the last
// prompt and reply are read once.
func TestInPlaceCompactionShownOnce(t *testing.T) {
	home := t.TempDir()
	path := writeState(t, home)
	db := importertest.SQLiteWriter(t, path)
	importertest.Exec(t, db, `ALTER TABLE messages ADD COLUMN display_identity BLOB`)
	importertest.Exec(t, db, `INSERT INTO sessions (id, source, model, started_at) VALUES ('20261102_080000_ab12cd34', 'cli', 'hermes-4-405b', 1793606400)`)
	importertest.Exec(t, db, `INSERT INTO messages (session_id, role, content, timestamp, _compressed_summary, active, compacted, display_identity) VALUES
		('20261102_080000_ab12cd34', 'user', 'Count the files.', 1793606401, 0, 0, 1, X'01'),
		('20261102_080000_ab12cd34', 'assistant', 'There are 12.', 1793606402, 0, 0, 1, X'02'),
		('20261102_080000_ab12cd34', 'user', 'And the directories?', 1793606410, 0, 0, 1, X'03'),
		('20261102_080000_ab12cd34', 'assistant', 'There are 3.', 1793606411, 0, 0, 1, X'04'),
		('20261102_080000_ab12cd34', 'user', '[CONTEXT COMPACTION] The user counted the files.', 1793606409, 1, 1, 0, X'05'),
		('20261102_080000_ab12cd34', 'user', 'And the directories?', 1793606410, 0, 1, 0, X'03'),
		('20261102_080000_ab12cd34', 'assistant', 'There are 3.', 1793606411, 0, 1, 0, X'04')`)
	db.Close()
	_, s := importertest.ReadValidFor(t, Format{}, home, "20261102_080000_ab12cd34")
	if got := importertest.Roles(s); got != "user assistant summary user assistant" {
		t.Errorf("roles %s, want the kept tail once", got)
	}
}

// Hermes's named profiles (hermes -p NAME) keep their own state.db under
// profiles/NAME of the home directory: read with the home directory's.
func TestProfiles(t *testing.T) {
	home := t.TempDir()
	writeState(t, filepath.Join(home, "profiles", "work"))
	res := importertest.ReadAllValid(t, Format{}, home)
	importertest.Session(t, res, "20261101_090000_aa11bb22")
	if len(res.Sessions) != 3 {
		t.Errorf("%d sessions from the profile, want 3", len(res.Sessions))
	}
}
