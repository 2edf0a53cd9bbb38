package clitest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// HubHoldsNo fails if the hub's store holds any of words in the clear:
// any file of its SQLite store (which must be there), or the headers and
// bodies of its PostgreSQL table of records (which must hold some).
func HubHoldsNo(t *testing.T, hubHome, hubDB string, words ...string) {
	t.Helper()
	if hubDB == "" {
		files, _ := filepath.Glob(filepath.Join(hubHome, "data", "sessions.db*"))
		if !slices.Contains(files, filepath.Join(hubHome, "data", "sessions.db")) {
			t.Fatalf("the hub's store is not there to read: %v", files)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range words {
				if strings.Contains(string(raw), w) {
					t.Errorf("the hub's %s holds %q in the clear", filepath.Base(f), w)
				}
			}
		}
		return
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, hubDB)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, w := range words {
		var records, plain int
		if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE position(convert_to($1, 'UTF8') IN body) > 0
			OR position(convert_to($1, 'UTF8') IN header) > 0) FROM sync_records`, w).Scan(&records, &plain); err != nil || records == 0 || plain > 0 {
			t.Errorf("the hub's tables: %d records, %d holding %q in the clear, %v", records, plain, w, err)
		}
	}
}

// StartHub starts a hub, loom serve over the store hubDB (its own SQLite
// file when empty), and returns it, its home and the environment of a
// machine that syncs with it.
func StartHub(t *testing.T, hubDB string) (srv *ServeProc, home string, syncEnv []string) {
	t.Helper()
	home = t.TempDir()
	env := []string{"LOOM_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if hubDB != "" {
		env = append(env, "LOOM_DB="+hubDB)
	}
	srv = StartServeProc(t, env, "")
	return srv, home, []string{"LOOM_SYNC_HUB=" + srv.Base, "LOOM_SYNC_TOKEN=" + srv.Token}
}

// SyncPair returns two empty machines that sync through a hub on hubDB
// (see startHub) with one key, and the hub and its home.
func SyncPair(t *testing.T, hubDB string) (a, b *Fixture, srv *ServeProc, hubHome string) {
	t.Helper()
	srv, hubHome, syncEnv := StartHub(t, hubDB)
	a, b = NewEmptyFixture(t), NewEmptyFixture(t)
	a.ExtraEnv, b.ExtraEnv = syncEnv, syncEnv
	key := strings.TrimSpace(a.MustExec(t, "sync", "key"))
	if r := b.Exec(t, key+"\n", "sync", "key", "--set"); r.Code != 0 {
		t.Fatalf("set the key: %s", r.Stderr)
	}
	return a, b, srv, hubHome
}
