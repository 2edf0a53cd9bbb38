package sync_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/storetest"
)

// A hub whose disk fills: loom sync says so in one line, with what to do
// (exit 1), the hub's log says why, and once there is room again the
// next sync goes through. The disk is a real one that fills: a small
// tmpfs holding the hub's SQLite file, or the tablespace of its
// PostgreSQL tables.
func TestSyncHubOutOfSpace(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	t.Run("hub on SQLite", func(t *testing.T) {
		disk := storetest.SmallDisk(t, "16m", "")
		testSyncHubOutOfSpace(t, filepath.Join(disk, "sessions.db"), disk)
	})
	t.Run("hub on PostgreSQL", func(t *testing.T) {
		pool := clitest.PostgresAdmin(t)
		disk := storetest.SmallDisk(t, "16m", "postgres")
		on := storetest.Tablespace(t, pool, disk)
		testSyncHubOutOfSpace(t, on(clitest.FreshSchema(t)), disk)
	})
}

func testSyncHubOutOfSpace(t *testing.T, hubDB, disk string) {
	srv, _, syncEnv := clitest.StartHub(t, hubDB)
	fx := clitest.NewFixture(t)
	fx.ExtraEnv = syncEnv
	fx.MustExec(t, "sync", "key")
	fx.MustExec(t, "sync")

	free := storetest.Fill(t, disk)
	// A reply of a megabyte of text no compression shrinks: more than
	// the full disk has room for.
	noise := make([]byte, 512<<10)
	rand.Read(noise)
	// On the real clock, as the sync that logged the store's writes.
	st := fx.OpenEngine(t)
	err := st.Append(context.Background(), fx.Main, clitest.TextMsg(loom.RoleAssistant, hex.EncodeToString(noise), time.Now()))
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := fx.Exec(t, "", "sync")
	want := "loom: hub " + srv.Base + ": the hub is out of disk space: free some on the hub's machine, then sync again\n"
	if r.Code != cli.ExitError || r.Stderr != want {
		t.Fatalf("sync to a full hub: exit %d, stderr %q; want exit 1 and %q", r.Code, r.Stderr, want)
	}
	if logs := srv.Stderr.String(); !strings.Contains(logs, "out of disk space") {
		t.Errorf("the hub's log does not say its disk is full:\n%s", logs)
	}
	free()
	if r := fx.Exec(t, "", "sync"); r.Code != 0 {
		t.Fatalf("sync with room again: exit %d, %s", r.Code, r.Stderr)
	}
}
