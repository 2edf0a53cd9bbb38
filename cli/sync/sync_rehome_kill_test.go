package sync_test

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/synclog"
)

// kill -9 while a store restored from a backup takes a new host
// (sqlite.Store.SyncRehome, the first thing such a sync writes) loses
// nothing: the next loom sync runs to the end, and both machines hold
// the same sessions, those the store had sent after the backup and those
// it made after the restore. Each round kills the sync later into what
// it writes, from its first bytes on.
func TestSyncRehomeKilled(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step")
	if testing.Short() {
		t.Skip("kills syncs of the built loom")
	}
	a, b, _, _ := clitest.SyncPair(t, "")
	clitest.Say(t, a, "before the backup", 2)
	want := []string{"before the backup"}
	converge(t, want, a, b)
	backup := a.DB + ".backup"
	var rehomed, kept int
	for round := range 4 {
		storetest.CopyClosed(t, a.DB, backup)
		sent := fmt.Sprintf("sent after backup %d", round)
		clitest.Say(t, a, sent, 2)
		a.MustExec(t, "sync")
		storetest.CopyClosed(t, backup, a.DB)
		want = append(want, sent)
		// Enough written after the restore that the rehome writes the
		// store for a while.
		for i := range 12 {
			title := fmt.Sprintf("made after restore %d, %d", round, i)
			clitest.Say(t, a, title, 12)
			want = append(want, title)
		}
		before := syncHostOf(t, a)
		cmd := exec.Command(clitest.LoomBinary(t), "sync")
		cmd.Dir, cmd.Env = a.Project, a.BinEnv()
		if !clitest.KillWhenGrown(t, cmd, a.DB, int64(round)*96<<10) {
			t.Fatalf("round %d: the sync ended before it had written %d KiB", round, round*96)
		}
		if syncHostOf(t, a) == before {
			kept++ // killed before the new host was committed
		} else {
			rehomed++ // killed after it, before the sync ended
		}
		converge(t, want, a, b)
	}
	t.Logf("%d syncs killed before their rehome committed, %d after", kept, rehomed)
}

// syncHostOf returns the sync host of fx's store.
func syncHostOf(t *testing.T, fx *clitest.Fixture) synclog.HostID {
	t.Helper()
	st, err := sqlite.Open(context.Background(), fx.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := st.SyncHost(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h
}
