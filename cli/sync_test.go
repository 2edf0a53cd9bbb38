package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two machines sync through a hub (a real loom serve): the second gets
// every session of the first, a change on either reaches the other, the
// hub's file holds no message's text, and a hub that is down or a wrong
// key is one clear line and a non-zero exit.
func TestSyncTwoMachines(t *testing.T) {
	if onPostgres() {
		t.Skip("sync keeps SQLite stores in step")
	}
	hubHome := t.TempDir()
	hub := startServeProc(t, []string{"LOOM_HOME=" + hubHome, "HOME=" + hubHome, "PATH=" + os.Getenv("PATH")}, "")
	syncEnv := []string{"LOOM_SYNC_HUB=" + hub.base, "LOOM_SYNC_TOKEN=" + hub.token}
	a, b := newFixture(t), newEmptyFixture(t)
	a.extraEnv, b.extraEnv = syncEnv, syncEnv

	if r := a.exec(t, "", "sync"); r.code == 0 || !strings.Contains(r.stderr, "loom sync key") {
		t.Fatalf("sync without a key: exit %d, %s", r.code, r.stderr)
	}
	key := strings.TrimSpace(a.mustExec(t, "sync", "key"))
	if again := strings.TrimSpace(a.mustExec(t, "sync", "key")); again != key {
		t.Fatalf("the key changed: %q, then %q", key, again)
	}
	if r := b.exec(t, key[:len(key)-2]+"xx\n", "sync", "key", "--set"); r.code != ExitUsage || !strings.Contains(r.stderr, "mistyped") {
		t.Fatalf("a mistyped key: exit %d, %s", r.code, r.stderr)
	}
	if r := b.exec(t, key+"\n", "sync", "key", "--set"); r.code != 0 {
		t.Fatalf("set the key: exit %d, %s", r.code, r.stderr)
	}

	pushed := decodeJSON[syncResult](t, a.mustExec(t, "sync", "--json"))
	if pushed.Pushed == 0 || pushed.Host == "" {
		t.Fatalf("the first machine's sync = %+v", pushed)
	}
	pulled := decodeJSON[syncResult](t, b.mustExec(t, "sync", "--json"))
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

	status := a.mustExec(t, "sync", "status")
	if !strings.Contains(status, "(this machine)") || !strings.Contains(status, "2 machines") {
		t.Errorf("sync status:\n%s", status)
	}

	// A third machine with another key gets one clear error.
	c := newEmptyFixture(t)
	c.extraEnv = syncEnv
	c.mustExec(t, "sync", "key")
	if r := c.exec(t, "", "sync"); r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || !strings.Contains(r.stderr, "wrong sync key") {
		t.Errorf("sync with another key: exit %d, %q", r.code, r.stderr)
	}

	// The hub's store holds ciphertext only.
	for _, f := range []string{"sessions.db", "sessions.db-wal"} {
		raw, _ := os.ReadFile(filepath.Join(hubHome, "data", f))
		if strings.Contains(string(raw), "Fixed on the laptop") || strings.Contains(string(raw), "flaky") {
			t.Errorf("the hub's %s holds plaintext of the sessions", f)
		}
	}

	// With the hub down, sync says so in one line; the rest works.
	hub.cmd.Process.Kill()
	hub.cmd.Wait()
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
