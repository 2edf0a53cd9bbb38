package sync_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// The originals an import kept go with sync: the other machine, which
// never had the agent's files, reads the sessions again from them
// (loom session reimport) and finds them as they are; a purge takes them on both.
func TestSyncCarriesOriginals(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step")
	a, b, _, _ := clitest.SyncPair(t, "")
	dir := t.TempDir()
	clitest.CopyTree(t, filepath.Join(clitest.Samples, "claude-code", "spotter"), dir)
	// Sync set up first: what a store held before it is recorded as its
	// sessions, without their originals.
	a.MustExec(t, "sync")
	a.MustExec(t, "session", "import", "--from", "claude-code", dir)
	a.MustExec(t, "sync")
	b.MustExec(t, "sync")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	out := b.MustExec(t, "session", "reimport", "--from", "claude-code")
	if !strings.Contains(out, "read 5 kept files again: 0 sessions made again, 0 grown, 5 unchanged") {
		t.Fatalf("reimport on the other machine:\n%s", out)
	}
	// The session with its two sub-agents: three of the five files.
	const key = "claude-code:258c7280-ae70-4798-800f-63464d01a85d"
	b.MustExec(t, "session", "show", key)
	a.MustExec(t, "session", "delete", key, "--purge", "--yes")
	a.MustExec(t, "sync")
	b.MustExec(t, "sync")
	out = b.MustExec(t, "session", "reimport", "--from", "claude-code")
	if !strings.Contains(out, "read 2 kept files again") {
		t.Errorf("after the purge synced, reimport on the other machine:\n%s", out)
	}
}
