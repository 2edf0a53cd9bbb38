package session_test

import (
	"testing"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// --rescan reads every file again: a store that an import has seen
// finds nothing to repair and nothing new, and the flag goes with
// --from alone, never with --watch.
func TestImportRescan(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	installAgentSessions(t, fx.Home)
	fx.MustExec(t, "session", "import", "--from", "claude-code")
	r := fx.Exec(t, "", "session", "import", "--from", "claude-code", "--rescan", "--json")
	if r.Code != 0 {
		t.Fatalf("rescan: exit %d %s", r.Code, r.Stderr)
	}
	tr := clitest.ToolReport(t, clitest.ImportReport(t, r.Stdout), "claude-code")
	if tr.FilesRead == 0 || tr.FilesUnchanged != 0 || tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.SessionsRepaired != 0 {
		t.Errorf("rescan of an intact store: %+v, want every file read and nothing changed", tr)
	}
	for _, args := range [][]string{
		{"session", "import", "--from", "claude-code", "--rescan", "--watch"},
		{"session", "import", "--rescan", "x.jsonl"},
	} {
		if r := fx.Exec(t, "", args...); r.Code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, r.Code, cli.ExitUsage, r.Stderr)
		}
	}
}
