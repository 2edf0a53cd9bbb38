package session_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// gooseSchema is goose's sessions.db as its latest migration leaves the
// two tables loom reads.
const gooseSchema = `CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '', user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER, accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER, schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT, goose_mode TEXT NOT NULL DEFAULT 'auto', thread_id TEXT, archived_at TIMESTAMP, project_id TEXT, accumulated_cost REAL);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT, message_id TEXT);`

// gooseDB is a goose database held open as goose holds it (WAL mode),
// for the test to write messages into.
type gooseDB struct {
	db *sql.DB
	n  int
}

func openGooseDB(t *testing.T, path, cwd string) *gooseDB {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{gooseSchema, `INSERT INTO sessions (id, name, working_dir, provider_name, model_config_json, accumulated_input_tokens, accumulated_output_tokens) VALUES ('20251124_1', 'goose at work', '` + cwd + `', 'anthropic', '{"model_name":"claude-sonnet-4-5"}', 2000, 100)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return &gooseDB{db: db}
}

// add writes one message as goose's add_message does.
func (g *gooseDB) add(t *testing.T, role, content string) {
	t.Helper()
	g.n++
	if _, err := g.db.Exec(`INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) VALUES (?, '20251124_1', ?, ?, ?, '{"userVisible":true,"agentVisible":true}')`,
		fmt.Sprintf("msg_%03d", g.n), role, content, 1763971200+int64(g.n)); err != nil {
		t.Fatal(err)
	}
}

// `loom session import --from goose PATH` imports goose's database, a
// second import adds nothing, and --watch imports a message goose
// writes while it watches.
func TestImportGoose(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	sessions := filepath.Join(fx.Home, ".local", "share", "goose", "sessions")
	g := openGooseDB(t, filepath.Join(sessions, "sessions.db"), fx.Project)
	g.add(t, "user", `[{"type":"text","text":"what is in this directory"}]`)
	g.add(t, "assistant", `[{"type":"toolRequest","id":"c1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls"}}}}]`)
	g.add(t, "user", `[{"type":"toolResponse","id":"c1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"main.go"}]}}}]`)
	g.add(t, "assistant", `[{"type":"text","text":"One Go file."}]`)

	code, rep, stderr := fx.ImportAll(t, false, "--from", "goose", sessions)
	tr := clitest.ToolReport(t, rep, "goose")
	if code != 0 || tr.SessionsNew != 1 || tr.MessagesAdded != 3 {
		t.Fatalf("first import: exit %d, %+v, %s", code, tr, stderr)
	}
	code, rep, stderr = fx.ImportAll(t, false, "--from", "goose", sessions)
	tr = clitest.ToolReport(t, rep, "goose")
	if code != 0 || tr.SessionsNew != 0 || tr.MessagesAdded != 0 {
		t.Fatalf("second import: exit %d, %+v, %s", code, tr, stderr)
	}

	st := fx.OpenStore(t)
	ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "local", Surface: "goose"})
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions %v %v", ss, err)
	}
	if s := ss[0]; s.Title != "goose at work" || s.Key != "goose:20251124_1" || s.Usage.InputTokens != 2000 {
		t.Errorf("session %+v", s)
	}

	reports := fx.WatchImports(t, "goose")
	next := func() *importer.ToolReport {
		t.Helper()
		select {
		case rep, ok := <-reports:
			if !ok {
				t.Fatal("--watch ended")
			}
			return clitest.ToolReport(t, rep, "goose")
		case <-time.After(60 * time.Second):
			t.Fatal("--watch printed no report")
		}
		return nil
	}
	// The first run finds everything imported.
	if tr := next(); tr.MessagesAdded != 0 || tr.FilesFailed != 0 {
		t.Fatalf("first watch run: %+v", tr)
	}
	g.add(t, "user", `[{"type":"text","text":"quixoticpangolin written while watching"}]`)
	for {
		tr := next()
		if tr.FilesFailed > 0 {
			t.Fatalf("watch run: %+v", tr)
		}
		if tr.MessagesAdded == 1 {
			break
		}
	}
	hits, err := st.Search(context.Background(), loom.SearchQuery{Text: "quixoticpangolin", UserID: "local"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("hits %v %v", hits, err)
	}
}
