package sync_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/syncrun"
)

// Two machines sync through a hub (a real loom serve): the second gets
// every session of the first, a change on either reaches the other, the
// hub's file holds no message's text, and a hub that is down or a wrong
// key is one clear line and a non-zero exit.
func TestSyncTwoMachines(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	t.Run("hub on SQLite", func(t *testing.T) { testSyncTwoMachines(t, "") })
	t.Run("hub on PostgreSQL", func(t *testing.T) { testSyncTwoMachines(t, clitest.FreshSchema(t)) })
}

// testSyncTwoMachines runs TestSyncTwoMachines with the hub on the store
// hubDB, its own SQLite file when empty.
func testSyncTwoMachines(t *testing.T, hubDB string) {
	hubProc, hubHome, syncEnv := clitest.StartHub(t, hubDB)
	a, b := clitest.NewFixture(t), clitest.NewEmptyFixture(t)
	a.ExtraEnv, b.ExtraEnv = syncEnv, syncEnv

	if r := a.Exec(t, "", "sync"); r.Code == 0 || !strings.Contains(r.Stderr, "loom sync key") {
		t.Fatalf("sync without a key: exit %d, %s", r.Code, r.Stderr)
	}
	key := strings.TrimSpace(a.MustExec(t, "sync", "key"))
	if again := strings.TrimSpace(a.MustExec(t, "sync", "key")); again != key {
		t.Fatalf("the key changed: %q, then %q", key, again)
	}
	// A key file others may read is made private again, with a warning.
	keyFile := filepath.Join(a.Home, "config", "sync.key")
	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := a.Exec(t, "", "sync", "key"); r.Code != 0 || strings.TrimSpace(r.Stdout) != key || !strings.Contains(r.Stderr, "could be read by others") {
		t.Fatalf("a key file others may read: exit %d, %q, %q", r.Code, r.Stdout, r.Stderr)
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file after: %v, %v", fi.Mode(), err)
	}
	if r := b.Exec(t, key[:len(key)-2]+"xx\n", "sync", "key", "--set"); r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "mistyped") {
		t.Fatalf("a mistyped key: exit %d, %s", r.Code, r.Stderr)
	}
	if r := b.Exec(t, key+"\n", "sync", "key", "--set"); r.Code != 0 {
		t.Fatalf("set the key: exit %d, %s", r.Code, r.Stderr)
	}

	pushed := clitest.DecodeJSON[syncrun.Result](t, a.MustExec(t, "sync", "--json"))
	if pushed.Pushed == 0 || pushed.Host == "" {
		t.Fatalf("the first machine's sync = %+v", pushed)
	}
	pulled := clitest.DecodeJSON[syncrun.Result](t, b.MustExec(t, "sync", "--json"))
	if pulled.Pulled != pushed.Pushed {
		t.Fatalf("the second machine received %d records of %d", pulled.Pulled, pushed.Pushed)
	}
	same := func(what string) {
		t.Helper()
		for _, args := range [][]string{{"session", "list", "-a", "--json"}, {"search", "flaky", "-a", "--json"}} {
			if ga, gb := normalJSON(t, a.MustExec(t, args...)), normalJSON(t, b.MustExec(t, args...)); ga != gb {
				t.Fatalf("%s: loom %s differs:\nfirst:  %s\nsecond: %s", what, strings.Join(args, " "), ga, gb)
			}
		}
		if ga, gb := a.MustExec(t, "session", "show", a.Main.ID, "--json"), b.MustExec(t, "session", "show", a.Main.ID, "--json"); normalJSON(t, ga) != normalJSON(t, gb) {
			t.Fatalf("%s: the main session's messages differ", what)
		}
	}
	same("after the first sync")

	// A change on the second machine reaches the first.
	b.MustExec(t, "session", "rename", a.Main.ID, "Fixed on the laptop")
	b.MustExec(t, "sync")
	a.MustExec(t, "sync")
	if out := a.MustExec(t, "session", "show", a.Main.ID, "--json"); !strings.Contains(out, "Fixed on the laptop") {
		t.Fatalf("the rename did not reach the first machine")
	}
	same("after a rename on the second machine")

	// --watch keeps the second machine current within seconds.
	watch := exec.Command(clitest.LoomBinary(t), "sync", "--watch", "--interval", "200ms")
	watch.Dir, watch.Env = b.Project, b.BinEnv()
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { watch.Process.Kill(); watch.Wait() }()
	a.MustExec(t, "session", "rename", a.Web.ID, "Deploy notes, from the desktop")
	a.MustExec(t, "sync")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(b.MustExec(t, "session", "show", a.Web.ID, "--json"), "from the desktop"); {
		if time.Now().After(deadline) {
			t.Fatal("the watching machine did not get the rename within 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	watch.Process.Kill()
	watch.Wait()

	status := a.MustExec(t, "sync", "status")
	if !strings.Contains(status, "(this machine)") || !strings.Contains(status, "2 machines") {
		t.Errorf("sync status:\n%s", status)
	}

	// A third machine is not given a new key while the hub holds
	// records under this one; given another anyway, its sync is one
	// clear error and sends nothing, and the others sync on.
	c := clitest.NewEmptyFixture(t)
	c.ExtraEnv = syncEnv
	if r := c.Exec(t, "", "sync", "key"); r.Code == 0 || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 || !strings.Contains(r.Stderr, "loom sync key --set") {
		t.Errorf("a new key where the hub holds records: exit %d, %q", r.Code, r.Stderr)
	}
	other, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Exec(t, other.Text()+"\n", "sync", "key", "--set"); r.Code != 0 {
		t.Fatalf("set another key: %s", r.Stderr)
	}
	clitest.Say(t, c, "on the third machine", 1)
	if r := c.Exec(t, "", "sync"); r.Code == 0 || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 || !strings.Contains(r.Stderr, "the hub holds your records sealed with sync key") || !strings.Contains(r.Stderr, "loom sync key --set") {
		t.Errorf("sync with another key: exit %d, %q", r.Code, r.Stderr)
	}
	if status := a.MustExec(t, "sync", "status"); !strings.Contains(status, "2 machines") {
		t.Errorf("the machine with another key sent records:\n%s", status)
	}
	a.MustExec(t, "sync")
	b.MustExec(t, "sync")
	if r := c.Exec(t, key+"\n", "sync", "key", "--set", "--force"); r.Code != 0 {
		t.Fatalf("set the key: %s", r.Stderr)
	}
	c.MustExec(t, "sync")
	if !strings.Contains(a.MustExec(t, "sync"), "received") || !strings.Contains(a.MustExec(t, "session", "list", "-a"), "on the third machine") {
		t.Errorf("the third machine's session did not arrive once it had the key")
	}

	// The hub's store holds ciphertext only.
	clitest.HubHoldsNo(t, hubHome, hubDB, "Fixed on the laptop", "flaky")

	// With the hub down, sync says so in one line; the rest works.
	hubProc.Cmd.Process.Kill()
	hubProc.Cmd.Wait()
	r := a.Exec(t, "", "sync")
	if r.Code == 0 || !strings.Contains(r.Stderr, "hub unreachable") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
		t.Errorf("sync with the hub down: exit %d, %q", r.Code, r.Stderr)
	}
	a.MustExec(t, "session", "list", "-a")
	a.MustExec(t, "search", "flaky", "-a")
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
