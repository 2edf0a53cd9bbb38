package sync_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/syncrun"
)

// The hub's own accidents, through the built loom and a real hub on
// SQLite and on PostgreSQL: the hub restored from an old copy, or its
// store emptied, after a machine that wrote since then is gone. The
// remaining machines send it what they hold of every machine, so every
// machine, and one that joins afterwards, ends with every session and
// message any of them held, and later work flows both ways. Also when
// one of the remaining stores had taken a new host (restored from its
// own backup): its records under the old host come back too.
func TestSyncLostHub(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	clitest.OnBothHubs(t, func(t *testing.T, hubDB func(*testing.T) string) {
		for _, oldCopy := range []bool{true, false} {
			for _, rehomed := range []bool{false, true} {
				name := "emptied"
				if oldCopy {
					name = "restored from an old copy"
				}
				if rehomed {
					name += ", a machine rehomed"
				}
				t.Run(name, func(t *testing.T) { testSyncLostHub(t, hubDB(t), oldCopy, rehomed) })
			}
		}
	})
}

func testSyncLostHub(t *testing.T, hubDB string, oldCopy, rehomed bool) {
	h := newTestHub(t, hubDB)
	a := h.machine(t, "")
	key := strings.TrimSpace(a.MustExec(t, "sync", "key"))
	b, x := h.machine(t, key), h.machine(t, key)
	clitest.Say(t, a, "on a", 1)
	clitest.Say(t, b, "on b", 1)
	clitest.Say(t, x, "on x", 1)
	want := []string{"on a", "on b", "on x"}
	converge(t, want, a, b, x)
	if rehomed {
		// b restored from its own backup: the session it wrote after
		// the backup comes back from the hub as its old host's.
		backup := b.DB + ".backup"
		storetest.CopyClosed(t, b.DB, backup)
		clitest.Say(t, b, "b before its restore", 1)
		b.MustExec(t, "sync")
		storetest.CopyClosed(t, backup, b.DB)
		wantRehome(t, b)
		want = append(want, "b before its restore")
		converge(t, want, a, b, x)
	}
	var copied string
	if oldCopy {
		copied = h.backup(t)
	}
	// What the hub's copy lacks: x's own session and turns in a's,
	// and turns of b's in x's session, which follow x's records.
	clitest.Say(t, x, "x after the copy", 2)
	clitest.Say(t, x, "on a", 1)
	x.MustExec(t, "sync")
	b.MustExec(t, "sync")
	clitest.Say(t, b, "x after the copy", 1)
	b.MustExec(t, "sync")
	a.MustExec(t, "sync")
	want = append(want, "x after the copy")

	// x is gone (sold, wiped) and never syncs again; the hub is lost.
	if oldCopy {
		h.restore(t, copied)
	} else {
		h.empty(t)
	}
	if out := a.MustExec(t, "sync", "status"); !strings.Contains(out, "the hub lacks") {
		t.Fatalf("sync status does not say the hub lacks what this machine holds:\n%s", out)
	}
	r := a.Exec(t, "", "sync", "--json")
	if r.Code != 0 {
		t.Fatalf("loom sync after the hub was lost: exit %d, %s", r.Code, r.Stderr)
	}
	if res := clitest.DecodeJSON[syncrun.Result](t, r.Stdout); res.Reseeded == 0 {
		t.Fatalf("the sync sent the hub nothing of other machines: %+v", res)
	}
	if strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 || !strings.Contains(r.Stderr, "nothing is lost") {
		t.Fatalf("what loom sync said: %q", r.Stderr)
	}

	// A machine that joins afterwards gets it all, and later work flows
	// every way.
	c := h.machine(t, key)
	clitest.Say(t, c, "on c", 1)
	clitest.Say(t, a, "a after the loss", 1)
	clitest.Say(t, b, "on x", 1)
	want = append(want, "on c", "a after the loss")
	converge(t, want, a, b, c)
	clitest.Say(t, c, "x after the copy", 1)
	clitest.Say(t, b, "b after the loss", 1)
	converge(t, append(want, "b after the loss"), c, b, a)
}

// testHub is a hub, loom serve, that a test can stop, copy, restore and
// empty: over its own SQLite file when db is "", else the PostgreSQL
// schema db names.
type testHub struct {
	home, db string
	srv      *clitest.ServeProc
	machines []*clitest.Fixture // whose environment follows the hub's address and token
}

func newTestHub(t *testing.T, db string) *testHub {
	h := &testHub{home: t.TempDir(), db: db}
	h.start(t)
	return h
}

func (h *testHub) start(t *testing.T) {
	t.Helper()
	env := []string{"LOOM_HOME=" + h.home, "HOME=" + h.home, "PATH=" + os.Getenv("PATH")}
	if h.db != "" {
		env = append(env, "LOOM_DB="+h.db)
	}
	h.srv = clitest.StartServeProc(t, env, "")
	for _, fx := range h.machines {
		fx.ExtraEnv = h.env()
	}
}

// env is the environment of a machine that syncs with the hub as it runs
// now (its address and token change when it starts again).
func (h *testHub) env() []string {
	return []string{"LOOM_SYNC_HUB=" + h.srv.Base, "LOOM_SYNC_TOKEN=" + h.srv.Token}
}

// machine returns an empty machine that syncs with the hub, with key (a
// new one when "").
func (h *testHub) machine(t *testing.T, key string) *clitest.Fixture {
	t.Helper()
	fx := clitest.NewEmptyFixture(t)
	fx.ExtraEnv = h.env()
	h.machines = append(h.machines, fx)
	if key != "" {
		if r := fx.Exec(t, key+"\n", "sync", "key", "--set"); r.Code != 0 {
			t.Fatalf("set the key: %s", r.Stderr)
		}
	}
	return fx
}

// stop ends loom serve as Ctrl+C does.
func (h *testHub) stop(t *testing.T) {
	t.Helper()
	if err := h.srv.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	h.srv.Cmd.Wait()
}

// file is the hub's SQLite store.
func (h *testHub) file() string { return filepath.Join(h.home, "data", "sessions.db") }

// schema is the hub's PostgreSQL schema and a URL of its database that
// libpq's tools take.
func (h *testHub) schema(t *testing.T) (string, string) {
	t.Helper()
	u, err := url.Parse(h.db)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	name := q.Get("search_path")
	q.Del("search_path")
	u.RawQuery = q.Encode()
	return name, u.String()
}

// backup stops the hub, copies its store as a backup would and starts it
// again; it returns the copy.
func (h *testHub) backup(t *testing.T) string {
	t.Helper()
	h.stop(t)
	out := filepath.Join(t.TempDir(), "hub.backup")
	if h.db == "" {
		storetest.CopyClosed(t, h.file(), out)
	} else {
		name, db := h.schema(t)
		cmd := exec.Command("pg_dump", "--dbname="+db, "--schema="+name, "--file="+out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pg_dump: %v: %s", err, msg)
		}
	}
	h.start(t)
	return out
}

// restore stops the hub, puts the copy backup made in place of its store
// and starts it again.
func (h *testHub) restore(t *testing.T, copied string) {
	t.Helper()
	h.stop(t)
	if h.db == "" {
		storetest.CopyClosed(t, copied, h.file())
	} else {
		h.dropSchema(t, false)
		_, db := h.schema(t)
		in, err := os.Open(copied)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		cmd := exec.Command("psql", "--quiet", "--set=ON_ERROR_STOP=1", "--dbname="+db)
		cmd.Stdin = in
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("psql: %v: %s", err, msg)
		}
	}
	h.start(t)
}

// empty stops the hub, deletes its store and starts it on a new one.
func (h *testHub) empty(t *testing.T) {
	t.Helper()
	h.stop(t)
	if h.db == "" {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(h.file() + suffix)
		}
	} else {
		h.dropSchema(t, true)
	}
	h.start(t)
}

// dropSchema drops the hub's PostgreSQL schema, and makes it anew when
// again.
func (h *testHub) dropSchema(t *testing.T, again bool) {
	t.Helper()
	name, _ := h.schema(t)
	ctx := context.Background()
	if _, err := clitest.PgAdmin.Pool.Exec(ctx, `DROP SCHEMA `+name+` CASCADE`); err != nil {
		t.Fatal(err)
	}
	if again {
		if _, err := clitest.PgAdmin.Pool.Exec(ctx, `CREATE SCHEMA `+name); err != nil {
			t.Fatal(err)
		}
	}
}
