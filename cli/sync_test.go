package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/syncrun"
)

// Two machines sync through a hub (a real loom serve): the second gets
// every session of the first, a change on either reaches the other, the
// hub's file holds no message's text, and a hub that is down or a wrong
// key is one clear line and a non-zero exit.
func TestSyncTwoMachines(t *testing.T) {
	t.Parallel()
	if onPostgres() {
		t.Skip("sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	}
	t.Run("hub on SQLite", func(t *testing.T) { testSyncTwoMachines(t, "") })
	t.Run("hub on PostgreSQL", func(t *testing.T) { testSyncTwoMachines(t, freshSchema(t)) })
}

// testSyncTwoMachines runs TestSyncTwoMachines with the hub on the store
// hubDB, its own SQLite file when empty.
func testSyncTwoMachines(t *testing.T, hubDB string) {
	hubProc, hubHome, syncEnv := startHub(t, hubDB)
	a, b := newFixture(t), newEmptyFixture(t)
	a.extraEnv, b.extraEnv = syncEnv, syncEnv

	if r := a.exec(t, "", "sync"); r.code == 0 || !strings.Contains(r.stderr, "loom sync key") {
		t.Fatalf("sync without a key: exit %d, %s", r.code, r.stderr)
	}
	key := strings.TrimSpace(a.mustExec(t, "sync", "key"))
	if again := strings.TrimSpace(a.mustExec(t, "sync", "key")); again != key {
		t.Fatalf("the key changed: %q, then %q", key, again)
	}
	// A key file others may read is made private again, with a warning.
	keyFile := filepath.Join(a.home, "config", "sync.key")
	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := a.exec(t, "", "sync", "key"); r.code != 0 || strings.TrimSpace(r.stdout) != key || !strings.Contains(r.stderr, "could be read by others") {
		t.Fatalf("a key file others may read: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file after: %v, %v", fi.Mode(), err)
	}
	if r := b.exec(t, key[:len(key)-2]+"xx\n", "sync", "key", "--set"); r.code != ExitUsage || !strings.Contains(r.stderr, "mistyped") {
		t.Fatalf("a mistyped key: exit %d, %s", r.code, r.stderr)
	}
	if r := b.exec(t, key+"\n", "sync", "key", "--set"); r.code != 0 {
		t.Fatalf("set the key: exit %d, %s", r.code, r.stderr)
	}

	pushed := decodeJSON[syncrun.Result](t, a.mustExec(t, "sync", "--json"))
	if pushed.Pushed == 0 || pushed.Host == "" {
		t.Fatalf("the first machine's sync = %+v", pushed)
	}
	pulled := decodeJSON[syncrun.Result](t, b.mustExec(t, "sync", "--json"))
	if pulled.Pulled != pushed.Pushed {
		t.Fatalf("the second machine received %d records of %d", pulled.Pulled, pushed.Pushed)
	}
	same := func(what string) {
		t.Helper()
		for _, args := range [][]string{{"session", "list", "-a", "--json"}, {"search", "flaky", "-a", "--json"}} {
			if ga, gb := normalJSON(t, a.mustExec(t, args...)), normalJSON(t, b.mustExec(t, args...)); ga != gb {
				t.Fatalf("%s: loom %s differs:\nfirst:  %s\nsecond: %s", what, strings.Join(args, " "), ga, gb)
			}
		}
		if ga, gb := a.mustExec(t, "session", "show", a.main.ID, "--json"), b.mustExec(t, "session", "show", a.main.ID, "--json"); normalJSON(t, ga) != normalJSON(t, gb) {
			t.Fatalf("%s: the main session's messages differ", what)
		}
	}
	same("after the first sync")

	// A change on the second machine reaches the first.
	b.mustExec(t, "session", "rename", a.main.ID, "Fixed on the laptop")
	b.mustExec(t, "sync")
	a.mustExec(t, "sync")
	if out := a.mustExec(t, "session", "show", a.main.ID, "--json"); !strings.Contains(out, "Fixed on the laptop") {
		t.Fatalf("the rename did not reach the first machine")
	}
	same("after a rename on the second machine")

	// --watch keeps the second machine current within seconds.
	watch := exec.Command(loomBinary(t), "sync", "--watch", "--interval", "200ms")
	watch.Dir, watch.Env = b.project, b.binEnv()
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { watch.Process.Kill(); watch.Wait() }()
	a.mustExec(t, "session", "rename", a.web.ID, "Deploy notes, from the desktop")
	a.mustExec(t, "sync")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(b.mustExec(t, "session", "show", a.web.ID, "--json"), "from the desktop"); {
		if time.Now().After(deadline) {
			t.Fatal("the watching machine did not get the rename within 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	watch.Process.Kill()
	watch.Wait()

	status := a.mustExec(t, "sync", "status")
	if !strings.Contains(status, "(this machine)") || !strings.Contains(status, "2 machines") {
		t.Errorf("sync status:\n%s", status)
	}

	// A third machine is not given a new key while the hub holds
	// records under this one; given another anyway, its sync is one
	// clear error and sends nothing, and the others sync on.
	c := newEmptyFixture(t)
	c.extraEnv = syncEnv
	if r := c.exec(t, "", "sync", "key"); r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || !strings.Contains(r.stderr, "loom sync key --set") {
		t.Errorf("a new key where the hub holds records: exit %d, %q", r.code, r.stderr)
	}
	other, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if r := c.exec(t, other.Text()+"\n", "sync", "key", "--set"); r.code != 0 {
		t.Fatalf("set another key: %s", r.stderr)
	}
	say(t, c, "on the third machine", 1)
	if r := c.exec(t, "", "sync"); r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || !strings.Contains(r.stderr, "the hub holds your records sealed with sync key") || !strings.Contains(r.stderr, "loom sync key --set") {
		t.Errorf("sync with another key: exit %d, %q", r.code, r.stderr)
	}
	if status := a.mustExec(t, "sync", "status"); !strings.Contains(status, "2 machines") {
		t.Errorf("the machine with another key sent records:\n%s", status)
	}
	a.mustExec(t, "sync")
	b.mustExec(t, "sync")
	if r := c.exec(t, key+"\n", "sync", "key", "--set", "--force"); r.code != 0 {
		t.Fatalf("set the key: %s", r.stderr)
	}
	c.mustExec(t, "sync")
	if !strings.Contains(a.mustExec(t, "sync"), "received") || !strings.Contains(a.mustExec(t, "session", "list", "-a"), "on the third machine") {
		t.Errorf("the third machine's session did not arrive once it had the key")
	}

	// The hub's store holds ciphertext only.
	hubHoldsNo(t, hubHome, hubDB, "Fixed on the laptop", "flaky")

	// With the hub down, sync says so in one line; the rest works.
	hubProc.cmd.Process.Kill()
	hubProc.cmd.Wait()
	r := a.exec(t, "", "sync")
	if r.code == 0 || !strings.Contains(r.stderr, "hub unreachable") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Errorf("sync with the hub down: exit %d, %q", r.code, r.stderr)
	}
	a.mustExec(t, "session", "list", "-a")
	a.mustExec(t, "search", "flaky", "-a")
}

// normalJSON is s as JSON, each session's lock and this machine's own
// times of use left out.
func normalJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "lock")
			for k, e := range x {
				x[k] = strip(e)
			}
		case []any:
			for i, e := range x {
				x[i] = strip(e)
			}
		}
		return v
	}
	b, _ := json.Marshal(strip(v))
	return string(b)
}

// hubHoldsNo fails if the hub's store holds any of words in the clear:
// any file of its SQLite store (which must be there), or the headers and
// bodies of its PostgreSQL table of records (which must hold some).
func hubHoldsNo(t *testing.T, hubHome, hubDB string, words ...string) {
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

// startHub starts a hub, loom serve over the store hubDB (its own SQLite
// file when empty), and returns it, its home and the environment of a
// machine that syncs with it.
func startHub(t *testing.T, hubDB string) (srv *serveProc, home string, syncEnv []string) {
	t.Helper()
	home = t.TempDir()
	env := []string{"LOOM_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if hubDB != "" {
		env = append(env, "LOOM_DB="+hubDB)
	}
	srv = startServeProc(t, env, "")
	return srv, home, []string{"LOOM_SYNC_HUB=" + srv.base, "LOOM_SYNC_TOKEN=" + srv.token}
}

// syncPair returns two empty machines that sync through a hub on hubDB
// (see startHub) with one key, and the hub and its home.
func syncPair(t *testing.T, hubDB string) (a, b *fixture, srv *serveProc, hubHome string) {
	t.Helper()
	srv, hubHome, syncEnv := startHub(t, hubDB)
	a, b = newEmptyFixture(t), newEmptyFixture(t)
	a.extraEnv, b.extraEnv = syncEnv, syncEnv
	key := strings.TrimSpace(a.mustExec(t, "sync", "key"))
	if r := b.exec(t, key+"\n", "sync", "key", "--set"); r.code != 0 {
		t.Fatalf("set the key: %s", r.stderr)
	}
	return a, b, srv, hubHome
}
