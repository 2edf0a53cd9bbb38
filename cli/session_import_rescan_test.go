package cli

import (
	"testing"
)

// --rescan reads every file again: a store that an import has seen
// finds nothing to repair and nothing new, and the flag goes with
// --from alone, never with --watch.
func TestImportRescan(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	installAgentSessions(t, fx.home)
	fx.mustExec(t, "session", "import", "--from", "claude-code")
	r := fx.exec(t, "", "session", "import", "--from", "claude-code", "--rescan", "--json")
	if r.code != 0 {
		t.Fatalf("rescan: exit %d %s", r.code, r.stderr)
	}
	tr := toolReport(t, importReport(t, r.stdout), "claude-code")
	if tr.FilesRead == 0 || tr.FilesUnchanged != 0 || tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.SessionsRepaired != 0 {
		t.Errorf("rescan of an intact store: %+v, want every file read and nothing changed", tr)
	}
	for _, args := range [][]string{
		{"session", "import", "--from", "claude-code", "--rescan", "--watch"},
		{"session", "import", "--rescan", "x.jsonl"},
	} {
		if r := fx.exec(t, "", args...); r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, r.code, ExitUsage, r.stderr)
		}
	}
}
