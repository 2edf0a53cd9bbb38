package realclis_test

import (
	"cmp"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/importer/opencode"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// TestRestoreToDatabaseCLIs: opencode and Kilo keep every session in
// one database. A session of the program's own (opencode's from a
// database opencode 1.18.33 wrote; Kilo's from a first run of the real
// program), imported into loom and then deleted from the database as
// the program deletes one (its rows of the session, message and part
// tables), is put back by restore-to under its own id; the real program
// (offline, against a fake model) continues it with `run --session ID`
// and sends the model the whole history with the new prompt; an import
// then adds the new turn to the same session in loom. Restoring it
// again while the program has it is refused, and nothing is written.
func TestRestoreToDatabaseCLIs(t *testing.T) {
	clitest.RealAgentsOnce(t)
	for _, a := range moreRealAgents {
		if a.tool != opencode.Tool && a.tool != opencode.KiloTool {
			continue
		}
		t.Run(a.tool, func(t *testing.T) {
			t.Parallel()
			bin := agentclitest.Install(t, a.pkg)
			fx := clitest.NewFixture(t)
			srv, env, root, glob := a.start(t, fx.Home)
			timeout := cmp.Or(a.timeout, clitest.CLITimeout)
			if a.first {
				agentclitest.Run(t, timeout, fx.Project, env, bin, a.fresh("An earlier session of its own.")...)
			}
			importRoot := func() {
				t.Helper()
				if r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", a.tool, root); r.Code != 0 {
					t.Fatalf("import: exit %d: %s", r.Code, r.Stderr)
				}
			}
			importRoot()
			var src *loom.Session
			for _, s := range clitest.DecodeJSON[[]*loom.Session](t, fx.MustRun(t, "session", "list", "-a", "--surface", a.tool, "--json")) {
				if s.Kind == loom.KindMain && (src == nil || s.MessageCount > src.MessageCount) {
					src = s
				}
			}
			if src == nil {
				t.Fatalf("nothing imported from %s", root)
			}
			id := strings.TrimPrefix(src.Key, a.tool+":")
			db := filepath.Join(root, glob)
			forget(t, db, id)

			restore := func() clitest.Result {
				return fx.RunWith(t, clitest.RunOpts{Before: func(f *cli.Factory) { clitest.AllFormats(f); f.Now = time.Now }},
					"session", "restore-to", a.tool, id, "--dir", fx.Project, "--json")
			}
			r := restore()
			if r.Code != 0 {
				t.Fatalf("restore-to: exit %d: %s", r.Code, r.Stderr)
			}
			out := clitest.DecodeJSON[clitest.HandoffJSON](t, r.Stdout)
			if out.SessionID != id || out.From != src.ID || out.Path != db {
				t.Fatalf("restored as %s from %s into %s; want %s from %s into %s", out.SessionID, out.From, out.Path, id, src.ID, db)
			}
			prompt := "Which file holds the fix?"
			t.Logf("%s: %s", a.tool, a.resume(t, agentRun{bin: bin, dir: fx.Project, env: env, id: id, prompt: prompt, turn: 1, timeout: timeout}))
			checkSent(t, srv, prompt, handedHistory(t, fx, src.ID, a.tool))

			importRoot()
			checkGrown(t, fx, a.tool, src, prompt)
			before := rowCount(t, db)
			if r := restore(); r.Code != 1 || !strings.Contains(r.Stderr, "still has session") {
				t.Fatalf("restoring again: exit %d: %s", r.Code, r.Stderr)
			}
			if after := rowCount(t, db); after != before {
				t.Fatalf("restoring again changed the database: %d rows, then %d", before, after)
			}
		})
	}
}

// forget deletes session id from the program's database at path, as
// the program deletes a session: its parts, its messages, its row.
func forget(t *testing.T, path, id string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"DELETE FROM part WHERE session_id = ?", "DELETE FROM message WHERE session_id = ?", "DELETE FROM session WHERE id = ?"} {
		if _, err := db.Exec(q, id); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM session WHERE id = ?", id).Scan(&n); err != nil || n != 0 {
		t.Fatalf("session %s still in %s (%d, %v)", id, path, n, err)
	}
}

// rowCount is the number of rows of the session, message and part
// tables of the database at path.
func rowCount(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT (SELECT count(*) FROM session) + (SELECT count(*) FROM message) + (SELECT count(*) FROM part)").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
