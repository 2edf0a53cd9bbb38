package sync_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/syncrun"
)

// The accidents users make with sync, each through the built loom and a
// real hub: a store restored from a backup, a store copied to another
// machine that is used too, two syncs of one store at once, a hub URL
// without a scheme. Nothing is lost, both machines end with the same
// sessions after two syncs each, and what loom says is one line.
func TestSyncAccidents(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step; the hub runs on both engines in the SQLite run")
	clitest.OnBothHubs(t, func(t *testing.T, hubDB func(*testing.T) string) {
		// Each accident on a hub of its own.
		t.Run("restored from a backup", func(t *testing.T) { testSyncRestoredBackup(t, hubDB(t)) })
		t.Run("copied to another machine", func(t *testing.T) { testSyncCopiedStore(t, hubDB(t)) })
		t.Run("two syncs at once", func(t *testing.T) { testSyncTwoAtOnce(t, hubDB(t)) })
		t.Run("a huge paste", func(t *testing.T) { testSyncHugePaste(t, hubDB(t)) })
		t.Run("junk at a machine's next index", func(t *testing.T) { testSyncJunk(t, hubDB(t)) })
	})
	t.Run("another user than the token's", func(t *testing.T) {
		a, b, _, _ := clitest.SyncPair(t, "")
		clitest.Say(t, a, "alice's", 1)
		a.MustExec(t, "sync")
		b.ExtraEnv = append(b.ExtraEnv, "LOOM_USER=bob")
		r := b.Exec(t, "", "sync")
		if r.Code != 0 || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 || !strings.Contains(r.Stderr, "set LOOM_USER=local") {
			t.Fatalf("sync as another user: exit %d, %q", r.Code, r.Stderr)
		}
		// This machine counts among the hub's before it has sent a
		// record.
		c := clitest.NewEmptyFixture(t)
		c.ExtraEnv = a.ExtraEnv
		key := strings.TrimSpace(a.MustExec(t, "sync", "key"))
		if r := c.Exec(t, key+"\n", "sync", "key", "--set"); r.Code != 0 {
			t.Fatalf("set the key: %s", r.Stderr)
		}
		c.MustExec(t, "sync")
		if out := c.MustExec(t, "sync", "status"); !strings.Contains(out, "2 machines") || !strings.Contains(out, "(this machine)") {
			t.Errorf("sync status before this machine's first sync:\n%s", out)
		}
	})
	t.Run("hub without a scheme", func(t *testing.T) {
		fx := clitest.NewEmptyFixture(t)
		fx.ExtraEnv = []string{"LOOM_SYNC_HUB=hub.example:8080", "LOOM_SYNC_TOKEN=loom_x"}
		fx.MustExec(t, "sync", "key")
		r := fx.Exec(t, "", "sync")
		if r.Code == 0 || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 || !strings.Contains(r.Stderr, "http://HOST:PORT") {
			t.Fatalf("a hub URL without a scheme: exit %d, %q", r.Code, r.Stderr)
		}
	})
}

// converge syncs each machine twice, in turn, and checks they list the
// same sessions, the ones want names, with the same messages.
func converge(t *testing.T, want []string, fxs ...*clitest.Fixture) {
	t.Helper()
	for range 2 {
		for _, fx := range fxs {
			if r := fx.Exec(t, "", "sync"); r.Code != 0 {
				t.Fatalf("loom sync: exit %d, %s", r.Code, r.Stderr)
			}
		}
	}
	slices.Sort(want)
	for _, fx := range fxs {
		if got := clitest.Titles(t, fx); !slices.Equal(got, want) {
			t.Fatalf("a machine holds %q, want %q", got, want)
		}
	}
	first := normalJSON(t, fxs[0].MustExec(t, "search", "wombat", "-a", "-L", "100", "--json"))
	for _, fx := range fxs[1:] {
		if got := normalJSON(t, fx.MustExec(t, "search", "wombat", "-a", "-L", "100", "--json")); got != first {
			t.Fatalf("the machines' messages differ:\n%s\n%s", first, got)
		}
	}
}

// wantRehome checks the one line a sync that had to take a new host
// prints, and returns its result.
func wantRehome(t *testing.T, fx *clitest.Fixture) syncrun.Result {
	t.Helper()
	r := fx.Exec(t, "", "sync", "--json")
	if r.Code != 0 {
		t.Fatalf("loom sync: exit %d, %s", r.Code, r.Stderr)
	}
	res := clitest.DecodeJSON[syncrun.Result](t, r.Stdout)
	if res.Rehomed == nil || res.Host != res.Rehomed.New {
		t.Fatalf("the sync did not take a new host: %+v", res)
	}
	if strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 || !strings.Contains(r.Stderr, "nothing is lost") {
		t.Fatalf("what loom sync said: %q", r.Stderr)
	}
	return res
}

// A laptop restored from a backup: the sessions it had sent after the
// backup come back from the hub, the ones it makes after the restore
// leave it, and the other machine gets them all.
func testSyncRestoredBackup(t *testing.T, hubDB string) {
	a, b, _, _ := clitest.SyncPair(t, hubDB)
	clitest.Say(t, a, "before the backup", 2)
	converge(t, []string{"before the backup"}, a, b)
	backup := a.DB + ".backup"
	storetest.CopyClosed(t, a.DB, backup)

	clitest.Say(t, a, "after the backup", 2)
	clitest.Say(t, a, "before the backup", 1)
	a.MustExec(t, "sync")
	storetest.CopyClosed(t, backup, a.DB)
	clitest.Say(t, a, "after the restore", 1)

	res := wantRehome(t, a)
	if res.Rehomed.Moved == 0 || res.Pushed == 0 || res.Pulled == 0 {
		t.Fatalf("the restored machine sent %d and received %d records: %+v", res.Pushed, res.Pulled, res.Rehomed)
	}
	converge(t, []string{"before the backup", "after the backup", "after the restore"}, a, b)
	// And again: the store syncs on under its new host.
	clitest.Say(t, a, "later", 1)
	converge(t, []string{"before the backup", "after the backup", "after the restore", "later"}, a, b)
}

// A store copied to a second machine, both used: the copy that syncs
// second takes a new host, and every machine ends with both's sessions.
func testSyncCopiedStore(t *testing.T, hubDB string) {
	a, b, _, _ := clitest.SyncPair(t, hubDB)
	clitest.Say(t, a, "shared", 2)
	converge(t, []string{"shared"}, a, b)
	c := clitest.NewEmptyFixture(t)
	c.ExtraEnv = a.ExtraEnv
	key := strings.TrimSpace(a.MustExec(t, "sync", "key"))
	if r := c.Exec(t, key+"\n", "sync", "key", "--set"); r.Code != 0 {
		t.Fatalf("set the key: %s", r.Stderr)
	}
	if err := os.MkdirAll(strings.TrimSuffix(c.DB, "/sessions.db"), 0o755); err != nil {
		t.Fatal(err)
	}
	storetest.CopyClosed(t, a.DB, c.DB)

	clitest.Say(t, a, "on the first", 2)
	clitest.Say(t, c, "on the copy", 2)
	clitest.Say(t, c, "shared", 1)
	a.MustExec(t, "sync")
	wantRehome(t, c)
	converge(t, []string{"shared", "on the first", "on the copy"}, a, b, c)
}

// loom sync --watch and a loom sync by hand at once, or two by hand:
// both succeed and the hub holds each record once.
func testSyncTwoAtOnce(t *testing.T, hubDB string) {
	a, b, _, _ := clitest.SyncPair(t, hubDB)
	for round := range 5 {
		clitest.Say(t, a, fmt.Sprintf("round %d", round), 30)
		var wg sync.WaitGroup
		errs := make([]string, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(clitest.LoomBinary(t), "sync")
				cmd.Dir, cmd.Env = a.Project, a.BinEnv()
				if r, err := clitest.RunCmd(cmd, ""); err != nil || r.Code != 0 {
					errs[i] = fmt.Sprintf("exit %d, %s %v", r.Code, r.Stderr, err)
				}
			}()
		}
		wg.Wait()
		for _, e := range errs {
			if e != "" {
				t.Fatalf("round %d: two syncs at once: %s", round, e)
			}
		}
	}
	converge(t, []string{"round 0", "round 1", "round 2", "round 3", "round 4"}, a, b)
}

// A message of 24 MiB of random text (a pasted log, which compresses to
// more than the hub takes in one record) goes as fragments: the other
// machine gets it whole, and the changes after it go too.
func testSyncHugePaste(t *testing.T, hubDB string) {
	a, b, _, _ := clitest.SyncPair(t, hubDB)
	raw := make([]byte, 18<<20)
	rand.Read(raw)
	paste := base64.StdEncoding.EncodeToString(raw) + " zebrafish"
	st, err := sqlite.Open(context.Background(), a.DB)
	if err != nil {
		t.Fatal(err)
	}
	s := &loom.Session{UserID: "local", Key: "cli:paste", Title: "the paste"}
	err = st.Append(context.Background(), s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: paste}}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	clitest.Say(t, a, "after the paste", 1)
	converge(t, []string{"the paste", "after the paste"}, a, b)
	hits := clitest.DecodeJSON[[]loom.SearchHit](t, b.MustExec(t, "search", "zebrafish", "-a", "--json"))
	if len(hits) != 1 || hits[0].SessionID != s.ID {
		t.Fatalf("the paste on the other machine: %+v", hits)
	}
	msgs := clitest.DecodeJSON[struct {
		Session  json.RawMessage `json:"session"`
		Messages []loom.Message  `json:"messages"`
	}](t, b.MustExec(t, "session", "show", s.ID, "--json"))
	if len(msgs.Messages) != 1 || msgs.Messages[0].Text() != paste {
		t.Fatalf("the other machine holds %d messages of the paste", len(msgs.Messages))
	}
}

// Someone with a token but not the key puts junk at a machine's next
// index on the hub: the other machine's sync sets it aside in one line
// naming the host, applies the rest and exits 0; the machine that owns the log finds a
// record it did not write, sends its own under a new host and says its
// old log stops there; then every sync succeeds and both machines hold
// the same sessions.
func testSyncJunk(t *testing.T, hubDB string) {
	a, b, srv, _ := clitest.SyncPair(t, hubDB)
	clitest.Say(t, a, "first", 1)
	a.MustExec(t, "sync")
	b.MustExec(t, "sync")
	res := clitest.DecodeJSON[syncrun.Result](t, a.MustExec(t, "sync", "--json"))
	status := clitest.DecodeJSON[struct {
		Hub   string               `json:"hub"`
		Host  string               `json:"host"`
		Hosts []syncrun.HostStatus `json:"hosts"`
	}](t, a.MustExec(t, "sync", "status", "--json"))
	var next int64
	for _, h := range status.Hosts {
		if h.Host == string(res.Host) {
			next = h.Records + 1
		}
	}
	clitest.Say(t, a, "second", 1) // records next… here, not on the hub yet
	junk, _ := json.Marshal(map[string]any{"records": []any{map[string]any{"host": string(res.Host), "index": next, "header": []byte("junk"), "body": []byte("junk")}}})
	req, err := http.NewRequest("POST", srv.Base+"/api/v1/sync/records", bytes.NewReader(junk))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the junk was refused: %s", resp.Status)
	}
	clitest.Say(t, b, "on the other", 1)
	// The junk is set aside in one line naming the host (and one of how
	// many), the rest applied, and the sync exits 0, as a team's does.
	if r := b.Exec(t, "", "sync"); r.Code != 0 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 1 || !strings.Contains(r.Stderr, "writer "+string(res.Host)+", record "+strconv.FormatInt(next, 10)+" ("+syncrun.Nobody+"): set aside: ") {
		t.Fatalf("a sync past the junk: exit %d, %q", r.Code, r.Stderr)
	}
	wantRehome(t, a)
	converge(t, []string{"first", "second", "on the other"}, a, b)
}
