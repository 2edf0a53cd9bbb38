package omnigent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

const (
	mainID = "0d1f5a6e7c2b4f3a9e8d1a2b3c4d5e6f"
	subID  = "7e3c9a1b2d4f4e5a8b6c0d1e2f3a4b5c"
)

// The current generation (16-byte ids, codes): the skill Omnigent
// injected (a system message), the prompt, the reply of its reasoning,
// a call completed by its output and its text, the compaction's
// summary, the next prompt and its reply; routing and the error are
// counted as skipped; the model is the session's override; the scout's
// conversation is a sub-agent session of it, in its root's workspace.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, "testdata", 2, mainID, "system user assistant summary user assistant")
	if s.Title != "CI fails in UTC only" || s.Cwd != "/home/u/clock" || s.GitBranch != "fix-tz" || s.Model != "claude-opus-4-8" {
		t.Fatalf("session %q %q %q %q", s.Title, s.Cwd, s.GitBranch, s.Model)
	}
	if s.CreatedAt.Unix() != 1791100000 {
		t.Errorf("created %v", s.CreatedAt)
	}
	importertest.CheckTexts(t, s, loom.RoleUser, "Why does make test fail on CI only?", "Find every test like it, then fix them.")
	p := s.Messages[2].Parts
	if len(p) != 3 || p[0].Type != loom.PartReasoning || p[1].Name != "sys_os_shell" || p[1].Status != loom.ToolCompleted ||
		!bytes.Contains(p[1].Output, []byte("TestMidnight")) || p[2].Text != "CI runs in UTC; TestMidnight builds its date in time.Local." {
		t.Fatalf("reply %+v", p)
	}
	if res.Skipped["routing_decision"] != 1 || res.Skipped["error"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	sub := importertest.Session(t, res, subID)
	if sub.Kind != loom.KindSubagent || sub.ParentSourceID != mainID || sub.Title != "scout" || sub.Cwd != "/home/u/clock" || importertest.Roles(sub) != "user assistant" {
		t.Errorf("sub-agent %s of %q %q %q: %s", sub.Kind, sub.ParentSourceID, sub.Title, sub.Cwd, importertest.Roles(sub))
	}
}

// An earlier generation: text ids, type and kind names, the metadata on
// conversations and the model in agent_configuration.
func TestReadEarlierGeneration(t *testing.T) {
	path := filepath.Join(t.TempDir(), dbName)
	db := importertest.SQLiteWriter(t, path)
	for _, q := range []string{
		`CREATE TABLE conversations (workspace_id INTEGER, id VARCHAR(64), created_at INTEGER, updated_at INTEGER, title VARCHAR(768), parent_conversation_id VARCHAR(64), root_conversation_id VARCHAR(64), kind VARCHAR(16), sub_agent_name VARCHAR(128), workspace VARCHAR(2048), git_branch VARCHAR(255))`,
		`CREATE TABLE conversation_items (workspace_id INTEGER, conversation_id VARCHAR(64), id VARCHAR(64), created_at INTEGER, position INTEGER, type VARCHAR(32), data TEXT, search_text TEXT)`,
		`CREATE TABLE agent_configuration (workspace_id INTEGER, conversation_id VARCHAR(64), model_override VARCHAR(128))`,
		`INSERT INTO conversations VALUES (1, 'conv_a', 1780000000, 1780000100, 'Old one', NULL, 'conv_a', 'default', NULL, '/home/u/old', 'main')`,
		`INSERT INTO agent_configuration VALUES (1, 'conv_a', 'gpt-5.5')`,
		`INSERT INTO conversation_items VALUES (1, 'conv_a', 'i1', 1780000001, 0, 'message', '{"role": "user", "content": [{"type": "input_text", "text": "hello"}]}', 'hello')`,
		`INSERT INTO conversation_items VALUES (1, 'conv_a', 'i2', 1780000002, 1, 'message', '{"role": "assistant", "model": "polly", "content": [{"type": "output_text", "text": "hi"}]}', 'hi')`,
		`INSERT INTO conversation_items VALUES (1, 'conv_a', 'i3', 1780000003, 2, 'slash_command', '{"kind": "skill", "name": "x"}', '')`,
	} {
		importertest.Exec(t, db, q)
	}
	db.Close()
	res := importertest.ReadFile(t, Format{}, path)
	s := importertest.Session(t, res, "conv_a")
	if importertest.Roles(s) != "user assistant" || s.Model != "gpt-5.5" || s.Cwd != "/home/u/old" || res.Skipped["slash_command"] != 1 {
		t.Errorf("session %s %q %q, skipped %v", importertest.Roles(s), s.Model, s.Cwd, res.Skipped)
	}
}

// What loom keeps of chat.db is a copy of the rows it reads: no password
// hash, token or session state of Omnigent's server, no write-ahead
// log, which holds pages of the same file; the copy reads as chat.db
// does, what the write-ahead log held in it, and a reimport reads it.
func TestKeptCopyHoldsNoSecret(t *testing.T) {
	dir := importertest.CopyDir(t, "testdata")
	path := filepath.Join(dir, dbName)
	w := importertest.SQLiteWriter(t, path) // WAL: the row below stays in chat.db-wal while it is open
	importertest.Exec(t, w, `INSERT INTO conversation_items VALUES (1, X'`+mainID+`', X'ffffffffffffffffffffffffffffffff', 'r', 1791101000, 1, 13, 1, '{"role": "user", "content": [{"type": "input_text", "text": "Thanks."}]}', '', 'u@example.com')`)
	importertest.Exec(t, w, `UPDATE users SET password_hash = 'SECRET-IN-WAL-0a0b'`)
	defer w.Close()
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no write-ahead log: %v", err)
	}
	st := importertest.Store(t)
	importertest.Import(t, st, Format{}, dir)
	files, err := st.OriginalFiles(context.Background(), "alice", Tool)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != path {
		t.Fatalf("kept %+v", files)
	}
	var kept []byte
	err = st.OriginalChunks(context.Background(), "alice", path, func(c loom.OriginalChunk) error {
		b, err := importer.DecompressOriginal(c.Data)
		kept = append(kept, b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(kept, []byte("SECRET-")) || bytes.Contains(kept, []byte("argon2")) || bytes.Contains(kept, []byte("u@example.com")) {
		t.Fatal("the kept copy holds a secret of Omnigent's server")
	}
	restored := filepath.Join(t.TempDir(), dbName)
	importertest.WriteFile(t, restored, kept, 0o644)
	s := importertest.Session(t, importertest.ReadFile(t, Format{}, restored), mainID)
	if importertest.Roles(s) != "system user assistant summary user assistant user" || s.Model != "claude-opus-4-8" || s.Cwd != "/home/u/clock" {
		t.Errorf("the kept copy reads as %s %q %q", importertest.Roles(s), s.Model, s.Cwd)
	}
	bundles, err := importer.KeptBundles(context.Background(), st, "alice", Tool, nil)
	if err != nil || len(bundles) != 1 {
		t.Fatalf("kept bundles %v, %v", bundles, err)
	}
	im := &importer.Importer{Store: st, UserID: "alice"}
	tr, err := im.Reimport(context.Background(), Format{}, bundles)
	if err != nil || tr.FilesFailed != 0 {
		t.Fatalf("reimport %+v, %v", tr, err)
	}
}

func TestImportAndCount(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, "testdata", 2, 8)
	importertest.RefusesOtherDB(t, Format{}, dbName)
	n, err := Format{}.CountSessions(t.Context(), importertest.OneBundle(t, Format{}, filepath.Join("testdata", dbName)))
	if n != 2 || err != nil {
		t.Errorf("counted %d, %v", n, err)
	}
}

// Its place: ~/.omnigent; $OMNIGENT_DATA_DIR replaces it.
func TestRoots(t *testing.T) {
	if roots := (Format{}).Roots(nil, "/home/u"); len(roots) != 1 || roots[0] != "/home/u/.omnigent" {
		t.Errorf("roots %v", roots)
	}
	if got := (Format{}).Roots(importertest.Getenv("OMNIGENT_DATA_DIR", "/x/om"), "/home/u"); len(got) != 1 || got[0] != "/x/om" {
		t.Errorf("with $OMNIGENT_DATA_DIR: %v", got)
	}
}

// The rule for bad input, item by item (docs/import.md, "One damaged
// record"; importer/agents/badrecord_test.go holds it for files of
// JSON): an item whose data is damaged (garbage, cut, made non-JSON in
// its middle, a text made not UTF-8) is one problem line, and every
// other message of its conversation is kept in its place.
func TestOneDamagedItemIsOneLine(t *testing.T) {
	damages := map[string]func(string) string{
		"garbage":                func(string) string { return "\x00\x01garbage \x1b[2J" },
		"cut":                    func(d string) string { return d[:len(d)/2] },
		"non-JSON in the middle": func(d string) string { return d[:len(d)/2] + "}\x00 not JSON {" + d[len(d)/2:] },
		"not UTF-8 in a text": func(d string) string {
			i := strings.Index(d, `"text": "`)
			if i < 0 {
				i = strings.Index(d, `"output": "`)
			}
			if i < 0 {
				return ""
			}
			at := i + strings.Index(d[i:], `: "`) + 4
			return d[:at] + "\xff\xfe" + d[at:]
		},
	}
	before := importertest.ReadFile(t, Format{}, filepath.Join("testdata", dbName))
	ids := func(res *importer.Result) map[string][]string {
		out := map[string][]string{}
		for _, s := range res.Sessions {
			for _, m := range s.Messages {
				out[s.SourceID] = append(out[s.SourceID], m.ID)
			}
		}
		return out
	}
	want := ids(before)
	for rowid := 1; rowid <= 15; rowid++ {
		for way, damage := range damages {
			dir := importertest.CopyDir(t, "testdata")
			path := filepath.Join(dir, dbName)
			db := importertest.SQLiteWriter(t, path)
			var data string
			if err := db.QueryRow(`SELECT data FROM conversation_items WHERE rowid = ?`, rowid).Scan(&data); err != nil {
				t.Fatal(err)
			}
			bad := damage(data)
			if bad == "" {
				db.Close()
				continue
			}
			importertest.Exec(t, db, `UPDATE conversation_items SET data = ? WHERE rowid = ?`, bad, rowid)
			var pos int64
			if err := db.QueryRow(`SELECT position FROM conversation_items WHERE rowid = ?`, rowid).Scan(&pos); err != nil {
				t.Fatal(err)
			}
			db.Close()
			after := importertest.ReadFile(t, Format{}, path)
			what := fmt.Sprintf("item %d made %s", rowid, way)
			if len(after.Problems) != len(before.Problems)+1 {
				t.Errorf("%s: problems %v", what, after.Problems)
			}
			got := ids(after)
			for sid, msgs := range want {
				now := map[string]bool{}
				for _, id := range got[sid] {
					now[id] = true
				}
				var kept []string
				for _, id := range msgs {
					if now[id] {
						kept = append(kept, id)
					} else if id != "p"+strconv.FormatInt(pos, 10) {
						t.Errorf("%s: message %s of %s lost", what, id, sid)
					}
				}
				var order []string
				for _, id := range got[sid] {
					if slices.Contains(msgs, id) {
						order = append(order, id)
					}
				}
				if !slices.Equal(order, kept) {
					t.Errorf("%s: messages %v, want %v", what, order, kept)
				}
			}
		}
	}
}
