package cli

import (
	"strings"
	"testing"
)

// A token made in another store than the one the hub serves (loom token
// create without the hub's --db): loom sync says the hub does not know
// it and how to make one it does, in one line; token create says which
// store it kept the token in.
func TestSyncTokenOfAnotherStore(t *testing.T) {
	t.Parallel()
	if onPostgres() {
		t.Skip("sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	}
	_, _, syncEnv := startHub(t, "")
	elsewhere := newEmptyFixture(t)
	p := elsewhere.startPTY(t, "token", "create", "--user", "local", "--name", "sync")
	if code := p.Wait(t); code != 0 || !strings.Contains(p.Output(), "kept in the store "+elsewhere.db) {
		t.Fatalf("token create: exit %d:\n%s", code, p.Output())
	}
	secret := strings.TrimSpace(strings.Split(strings.TrimSpace(elsewhere.mustExec(t, "token", "create", "--user", "local")), "\n")[0])
	fx := newEmptyFixture(t)
	fx.extraEnv = append([]string{syncEnv[0]}, "LOOM_SYNC_TOKEN="+secret)
	fx.mustExec(t, "sync", "key")
	r := fx.exec(t, "", "sync")
	if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 ||
		!strings.Contains(r.stderr, "unknown, revoked or expired token") || !strings.Contains(r.stderr, "loom token create, with the store loom serve uses") {
		t.Fatalf("sync with a token of another store: exit %d, %q", r.code, r.stderr)
	}
}
