package session_test

import (
	"os/exec"
	"slices"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// kill -9 anywhere in an import of other agents' files loses and
// duplicates nothing: after imports killed as they write, one import to
// the end leaves the store as one import into an empty store does.
func TestImportKilledAnywhere(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "the kill comes when the SQLite file grows; the PostgreSQL import is one transaction a batch, as on SQLite")
	// A corpus of the sample Claude Code sessions copied into 12
	// projects, so that an import writes many batches.
	corpus := clitest.ClaudeCorpus(t, "p", 12)
	view := func(fx *clitest.Fixture) []string { return clitest.StoreView(t, fx) }
	clean := clitest.NewEmptyFixture(t)
	clean.MustExec(t, "session", "import", "--from", "claude-code", corpus)
	want := view(clean)

	fx := clitest.NewEmptyFixture(t)
	kills := 0
	for range 8 {
		cmd := exec.Command(clitest.LoomBinary(t), "session", "import", "--from", "claude-code", corpus)
		cmd.Dir, cmd.Env = fx.Project, fx.BinEnv()
		// Kill it once it has written something more, or let it end.
		if clitest.KillWhenGrown(t, cmd, fx.DB, 0) {
			kills++
		}
	}
	fx.MustExec(t, "session", "import", "--from", "claude-code", corpus)
	if got := view(fx); !slices.Equal(got, want) {
		t.Fatalf("after %d imports killed midway and one to the end, the store holds %d sessions, a clean import %d:\n%v\nwant\n%v",
			kills, len(got), len(want), got, want)
	}
	t.Logf("%d of 8 imports killed as they wrote", kills)
	if kills == 0 {
		t.Fatal("no import was killed while it wrote")
	}
}
