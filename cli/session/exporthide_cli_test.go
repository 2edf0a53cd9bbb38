package session_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A session Claude Code wrote (testdata's spotter session, its file under
// the folder Claude Code names after the project), exported for people
// with --hide-paths, holds its project's path in no form: not as typed,
// and not in the encoded folder name Claude Code writes into its own
// paths (/tmp/claude-1000/-home-USER-projects-spotter-…/tasks/…) that
// the replies and tool outputs repeat.
func TestExportHidePathsEveryForm(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	const name = "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
	b, err := os.ReadFile(filepath.Join(clitest.Samples, "claude-code", "spotter", name))
	if err != nil {
		t.Fatal(err)
	}
	clitest.MustWrite(t, filepath.Join(fx.Home, ".claude", "projects", "-home-USER-projects-spotter-worktrees-spotter-gqc", name), string(b))
	fx.MustExec(t, "session", "import", "--from", "claude-code")
	var listed []struct{ ID string }
	if err := json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "-a", "--json")), &listed); err != nil || len(listed) == 0 {
		t.Fatalf("session list: %v %+v", err, listed)
	}
	const segment = "spotter-worktrees" // the project's path's own part
	for _, format := range []string{"markdown", "html"} {
		plain := fx.MustExec(t, "session", "export", listed[0].ID, "--format", format)
		if !strings.Contains(plain, "-home-USER-projects-"+segment) {
			t.Fatalf("%s: the session no longer holds its project's encoded folder; the test checks nothing", format)
		}
		hidden := fx.MustExec(t, "session", "export", listed[0].ID, "--format", format, "--hide-paths")
		if i := strings.Index(hidden, segment); i >= 0 {
			t.Errorf("%s --hide-paths holds the project's path: …%s…", format, hidden[max(0, i-60):min(len(hidden), i+40)])
		}
	}
}
