package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A store damaged on disk: one message's stored parts no longer decode
// and another session lost a message row. A plain backup fails, naming
// the damage and --salvage; the salvaged backup holds every session
// (the damaged message and the lost one as notes saying so), says what
// it could not read in one line with exit status 1, and imports into a
// fresh store.
func TestExportSalvagesADamagedStore(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	db := fx.OpenStore(t).DB()
	// Valid JSON on both engines (PostgreSQL's column is json), but not
	// a list of parts.
	if err := db.Exec(`UPDATE bodies SET parts = '{"damaged": true}'
		WHERE id = (SELECT body_id FROM messages WHERE session_id = ? AND seq = 2)`, fx.Main.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`DELETE FROM messages WHERE session_id = ? AND seq = 1`, fx.Web.ID); err != nil {
		t.Fatal(err)
	}
	var sessions int
	if err := db.QueryRow(`SELECT count(*) FROM sessions WHERE user_id = 'local'`).Scan(&sessions); err != nil {
		t.Fatal(err)
	}

	r := fx.Run(t, "session", "export", "--all")
	if r.Code != cli.ExitError || r.Stdout != "" || len(clitest.Lines(r.Stderr)) != 1 ||
		!strings.Contains(r.Stderr, fx.Main.ID) || !strings.Contains(r.Stderr, "--salvage") {
		t.Fatalf("plain export of a damaged store: %+v", r)
	}

	file := filepath.Join(t.TempDir(), "rescued.jsonl")
	r = fx.Run(t, "session", "export", "--all", "--salvage", "-o", file)
	if r.Code != cli.ExitError || len(clitest.Lines(r.Stderr)) != 1 || !strings.Contains(r.Stderr, "the store is damaged") ||
		!strings.Contains(r.Stderr, fx.Main.ID) || !strings.Contains(r.Stderr, fx.Web.ID) {
		t.Fatalf("salvaging export: %+v", r)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("salvaging export wrote no file: %v", err)
	}

	dst := clitest.NewEmptyFixture(t)
	if out := dst.MustRun(t, "session", "import", file); len(clitest.Lines(out)) != sessions {
		t.Fatalf("import of the rescue printed %q, want the %d sessions", out, sessions)
	}
	note := func(ref string, seq int64) string {
		t.Helper()
		for _, m := range dst.ShowMessages(t, ref) {
			if m.Seq == seq {
				if len(m.Parts) != 1 || m.Parts[0].Type != loom.PartText {
					t.Fatalf("message %d of %s: %+v", seq, ref, m.Parts)
				}
				return m.Parts[0].Text
			}
		}
		t.Fatalf("%s has no message %d", ref, seq)
		return ""
	}
	if got := note(fx.Main.ID, 2); !strings.Contains(got, "its parts are damaged") {
		t.Errorf("damaged message imported as %q", got)
	}
	if got := note(fx.Web.ID, 1); !strings.Contains(got, "missing from the damaged store") {
		t.Errorf("lost message imported as %q", got)
	}
	if got := note(fx.Web.ID, 2); got != "With the deploy script." {
		t.Errorf("the message after the lost one imported as %q", got)
	}

	if r := fx.Run(t, "session", "export", fx.Main.ID, "--salvage"); r.Code != cli.ExitUsage {
		t.Fatalf("--salvage without --all: %+v", r)
	}
}
