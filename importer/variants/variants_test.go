package variants

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// copyTree copies the directory or file src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Each variant reads, from its own default place under the home
// directory, files its base agent's real program wrote there (laid out
// as the variant keeps them): every session is read whole, and keyed
// under the variant's name.
func TestVariantsReadTheirBasesFiles(t *testing.T) {
	repo := filepath.Join("..", "..")
	for _, c := range []struct {
		v    importer.Variant
		from string // the base's real files
		into string // where the variant keeps them, below its root
	}{
		{OpenClaude, filepath.Join(repo, "testdata", "agent-sessions", "claude-code", "spotter"), "-home-u-app"},
		{ClaudeCowork, filepath.Join(repo, "testdata", "agent-sessions", "claude-code", "spotter"),
			filepath.Join("local_5f2c", "vm", ".claude", "projects", "-sessions-app")},
		{Qoder, filepath.Join(repo, "testdata", "agent-sessions", "claude-code", "spotter"), "-home-u-app"},
		{IFlow, filepath.Join(repo, "testdata", "agent-sessions", "claude-code", "viewer-sample-project"), "-home-u-app"},
		{TraeX, filepath.Join(repo, "importer", "codex", "testdata"), filepath.Join("2026", "11", "24")},
		{PrimeAgent, filepath.Join(repo, "importer", "pi", "testdata"), "--home-u-app--"},
		{QClaw, filepath.Join(repo, "importer", "openclaw", "testdata", "agents"), ""},
		{WorkBuddy, filepath.Join(repo, "importer", "codebuddy", "testdata", "real"), ""},
		{Positron, filepath.Join(repo, "importer", "copilotchat", "testdata", "User", "workspaceStorage"), ""},
	} {
		t.Run(c.v.Tool(), func(t *testing.T) {
			home := t.TempDir()
			roots := c.v.Roots(nil, home)
			if len(roots) == 0 || !strings.HasPrefix(roots[0], home) {
				t.Fatalf("roots %v", roots)
			}
			copyTree(t, c.from, filepath.Join(roots[0], c.into))
			var sessions []*importer.Session
			for _, root := range roots {
				res := importertest.ReadAll(t, c.v, root)
				sessions = append(sessions, res.Sessions...)
			}
			if len(sessions) == 0 {
				t.Fatalf("no session read from %s", roots[0])
			}
			for _, s := range sessions {
				if len(s.Messages) == 0 {
					t.Errorf("session %s has no message", s.SourceID)
				}
			}
			st := importertest.Store(t)
			rep := importertest.Import(t, st, c.v, roots[0])
			if rep.SessionsNew == 0 || rep.Tool != c.v.Tool() {
				t.Fatalf("import %+v", rep)
			}
			listed, err := st.Sessions(t.Context(), loom.SessionFilter{Surface: c.v.Tool()})
			if err != nil || len(listed) != rep.SessionsNew {
				t.Errorf("%d sessions of surface %s, %v; imported %d", len(listed), c.v.Tool(), err, rep.SessionsNew)
			}
			// Its override variable names its directory.
			if c.v.Env != "" {
				dir := filepath.Join(home, "elsewhere")
				got := c.v.Roots(importertest.Getenv(c.v.Env, dir), home)
				if len(got) != 1 || got[0] != filepath.Join(dir, c.v.Sub) {
					t.Errorf("with $%s: roots %v", c.v.Env, got)
				}
			}
		})
	}
}

// MiMoCode reads, in its own data directory, the database opencode
// 1.18.33 wrote (importer/opencode/testdata), named as MiMoCode names
// its own.
func TestMiMoCodeReadsOpencodesDatabase(t *testing.T) {
	home := t.TempDir()
	roots := MiMoCode.Roots(nil, home)
	if len(roots) != 1 || roots[0] != filepath.Join(home, ".local", "share", "mimocode") {
		t.Fatalf("roots %v", roots)
	}
	data := importertest.ReadBytes(t, filepath.Join("..", "opencode", "testdata", "real-1.18.33.db"))
	importertest.MkdirAll(t, roots[0])
	importertest.WriteFile(t, filepath.Join(roots[0], "mimocode.db"), data, 0o644)
	st := importertest.Store(t)
	rep := importertest.Import(t, st, MiMoCode, roots[0])
	if rep.SessionsNew == 0 || rep.MessagesAdded == 0 || len(rep.Problems) != 0 {
		t.Fatalf("import %+v", rep)
	}
	listed, err := st.Sessions(t.Context(), loom.SessionFilter{Surface: "mimocode"})
	if err != nil || len(listed) != rep.SessionsNew {
		t.Errorf("%d sessions of surface mimocode, %v", len(listed), err)
	}
}

// NanoCode reads, in its own data directory, the database NanoCode
// 1.2.28 itself wrote (testdata/real-nanocode-1.2.28.db: `nanocode run`
// offline against a fake model that answered one prompt with 1,000
// input and 15 output tokens, 5 of them reasoning), its output counted
// once: NanoCode records the reasoning tokens inside its output as well
// as apart.
func TestNanoCodeReadsItsDatabase(t *testing.T) {
	home := t.TempDir()
	roots := NanoCode.Roots(nil, home)
	if len(roots) != 1 || roots[0] != filepath.Join(home, ".local", "share", "nanocode") {
		t.Fatalf("roots %v", roots)
	}
	data := importertest.ReadBytes(t, filepath.Join("testdata", "real-nanocode-1.2.28.db"))
	importertest.MkdirAll(t, roots[0])
	importertest.WriteFile(t, filepath.Join(roots[0], "opencode-dev.db"), data, 0o644)
	st := importertest.Store(t)
	rep := importertest.Import(t, st, NanoCode, roots[0])
	if rep.SessionsNew != 1 || rep.MessagesAdded != 2 || len(rep.Problems) != 0 {
		t.Fatalf("import %+v", rep)
	}
	listed, err := st.Sessions(t.Context(), loom.SessionFilter{Surface: "nanocode"})
	if err != nil || len(listed) != 1 {
		t.Fatalf("%d sessions of surface nanocode, %v", len(listed), err)
	}
	if u := listed[0].Usage; u.InputTokens != 1000 || u.OutputTokens != 15 || u.ReasoningTokens != 5 {
		t.Errorf("usage %+v, want 1,000 in, 15 out of which 5 reasoning", u)
	}
}

// Kiro CLI keeps Amazon Q Developer CLI's database in its own data
// directory (~/.local/share/kiro-cli/data.sqlite3, the place
// agentsview reads it from: kenn-io/agentsview at
// 538600744d1b87614d3746d36a0966c1f2ac1cad, internal/parser/kiro_sqlite.go):
// `--from kiro-cli` finds it there, each conversation a session of
// surface kiro-cli, its reply dated when its stream ended.
func TestKiroCLIReadsItsDatabase(t *testing.T) {
	home := t.TempDir()
	roots := KiroCLI.Roots(nil, home)
	if len(roots) != 2 || roots[0] != filepath.Join(home, ".local", "share", "kiro-cli") {
		t.Fatalf("roots %v", roots)
	}
	db := importertest.SQLiteWriter(t, filepath.Join(roots[0], "data.sqlite3"))
	importertest.Exec(t, db, `CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL, value TEXT NOT NULL,
		created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (key, conversation_id))`)
	importertest.Exec(t, db, `CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT)`)
	importertest.Exec(t, db, `INSERT INTO conversations_v2 VALUES (?, ?, ?, ?, ?)`, "/home/u/kiro-app", "kiro-1", `{"conversation_id":"kiro-1","history":[
{"user":{"env_context":{"env_state":{"current_working_directory":"/home/u/kiro-app"}},"content":{"Prompt":{"prompt":"Build the parser"}},"timestamp":"2026-05-17T10:00:00Z"},
 "assistant":{"Response":{"message_id":"assistant-1","content":"I can do that."}},
 "request_metadata":{"stream_end_timestamp_ms":1779012010000}}]}`, 1779012000000, 1779012010000)
	db.Close()
	res := importertest.ReadAll(t, KiroCLI, roots[0])
	if len(res.Sessions) != 1 || importertest.Roles(res.Sessions[0]) != "user assistant" {
		t.Fatalf("sessions %+v", res.Sessions)
	}
	s := res.Sessions[0]
	if s.Cwd != "/home/u/kiro-app" || !s.Messages[1].CreatedAt.Equal(s.Messages[0].CreatedAt.Add(10*time.Second)) {
		t.Errorf("cwd %q, reply at %v after the prompt at %v", s.Cwd, s.Messages[1].CreatedAt, s.Messages[0].CreatedAt)
	}
	st := importertest.Store(t)
	rep := importertest.Import(t, st, KiroCLI, roots[0])
	listed, err := st.Sessions(t.Context(), loom.SessionFilter{Surface: "kiro-cli"})
	if rep.SessionsNew != 1 || err != nil || len(listed) != 1 {
		t.Errorf("import %+v; %d listed, %v", rep, len(listed), err)
	}
	if got := KiroCLI.Roots(importertest.Getenv("LOOM_KIRO_CLI_DIR", "/x/kiro"), home); len(got) != 1 || got[0] != "/x/kiro" {
		t.Errorf("with $LOOM_KIRO_CLI_DIR: roots %v", got)
	}
}
