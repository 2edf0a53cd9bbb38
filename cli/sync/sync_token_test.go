package sync_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A token made in another store than the one the hub serves (loom token
// create without the hub's --db): loom sync says the hub does not know
// it and how to make one it does, in one line; token create says which
// store it kept the token in.
func TestSyncTokenOfAnotherStore(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	_, _, syncEnv := clitest.StartHub(t, "")
	elsewhere := clitest.NewEmptyFixture(t)
	p := elsewhere.StartPTY(t, "token", "create", "--user", "local", "--name", "sync")
	if code := p.Wait(t); code != 0 || !strings.Contains(p.Output(), "kept in the store "+elsewhere.DB) {
		t.Fatalf("token create: exit %d:\n%s", code, p.Output())
	}
	secret := strings.TrimSpace(strings.Split(strings.TrimSpace(elsewhere.MustExec(t, "token", "create", "--user", "local")), "\n")[0])
	fx := clitest.NewEmptyFixture(t)
	fx.ExtraEnv = append([]string{syncEnv[0]}, "LOOM_SYNC_TOKEN="+secret)
	fx.MustExec(t, "sync", "key")
	r := fx.Exec(t, "", "sync")
	if r.Code != 1 || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 ||
		!strings.Contains(r.Stderr, "unknown, revoked or expired token") || !strings.Contains(r.Stderr, "loom token create, with the store loom serve uses") {
		t.Fatalf("sync with a token of another store: exit %d, %q", r.Code, r.Stderr)
	}
}
