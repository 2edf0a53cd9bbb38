package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/storetest"
)

// A hub whose disk fills: loom sync says so in one line, with what to do
// (exit 1), the hub's log says why, and once there is room again the
// next sync goes through. The disk is a real one that fills: a small
// tmpfs holding the hub's SQLite file, or the tablespace of its
// PostgreSQL tables.
func TestSyncHubOutOfSpace(t *testing.T) {
	t.Parallel()
	if onPostgres() {
		t.Skip("sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	}
	t.Run("hub on SQLite", func(t *testing.T) {
		disk := storetest.SmallDisk(t, "16m", "")
		testSyncHubOutOfSpace(t, filepath.Join(disk, "sessions.db"), disk)
	})
	t.Run("hub on PostgreSQL", func(t *testing.T) {
		pool := postgresAdmin(t)
		disk := storetest.SmallDisk(t, "16m", "postgres")
		on := storetest.Tablespace(t, pool, disk)
		testSyncHubOutOfSpace(t, on(freshSchema(t)), disk)
	})
}

func testSyncHubOutOfSpace(t *testing.T, hubDB, disk string) {
	srv, _, syncEnv := startHub(t, hubDB)
	fx := newFixture(t)
	fx.extraEnv = syncEnv
	fx.mustExec(t, "sync", "key")
	fx.mustExec(t, "sync")

	free := storetest.Fill(t, disk)
	// A reply of a megabyte of text no compression shrinks: more than
	// the full disk has room for.
	noise := make([]byte, 512<<10)
	rand.Read(noise)
	// On the real clock, as the sync that logged the store's writes.
	st, err := openEngine(context.Background(), fx.db)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Append(context.Background(), fx.main, textMsg(loom.RoleAssistant, hex.EncodeToString(noise), time.Now()))
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := fx.exec(t, "", "sync")
	want := "loom: hub " + srv.base + ": the hub is out of disk space: free some on the hub's machine, then sync again\n"
	if r.code != ExitError || r.stderr != want {
		t.Fatalf("sync to a full hub: exit %d, stderr %q; want exit 1 and %q", r.code, r.stderr, want)
	}
	if logs := srv.stderr.String(); !strings.Contains(logs, "out of disk space") {
		t.Errorf("the hub's log does not say its disk is full:\n%s", logs)
	}
	free()
	if r := fx.exec(t, "", "sync"); r.code != 0 {
		t.Fatalf("sync with room again: exit %d, %s", r.code, r.stderr)
	}
}
