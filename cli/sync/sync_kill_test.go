package sync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	loomhub "github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/sqlite"
)

// A sync killed (SIGKILL) at any point of its push or its pull loses and
// duplicates nothing: after the next whole sync both machines hold the
// same sessions, and the hub holds each record of the first once.
func TestSyncKilledAnywhere(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "sync keeps SQLite stores in step")
	if testing.Short() {
		t.Skip("kills 60 syncs")
	}
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d", seed)
	a, b, hub, _ := clitest.SyncPair(t, "")
	ctx := context.Background()
	// write adds n sessions of m messages to a's store, as another
	// process of the first machine would.
	write := func(n, m int) {
		t.Helper()
		st, err := sqlite.Open(ctx, a.DB)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.EnableSync(ctx); err != nil {
			t.Fatal(err)
		}
		for range n {
			s := &loom.Session{UserID: "local", Key: fmt.Sprintf("cli:api:%d", rng.Int64())}
			for j := range m {
				role := loom.RoleUser
				if j%2 == 1 {
					role = loom.RoleAssistant
				}
				msg := &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: strings.Repeat(fmt.Sprintf("word%d ", j), 40)}}}
				if err := st.Append(ctx, s, msg); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// killed runs loom sync on fx and kills it after a random time,
	// within the time a whole sync takes.
	killed := func(fx *clitest.Fixture, within time.Duration) {
		t.Helper()
		cmd := exec.Command(clitest.LoomBinary(t), "sync")
		cmd.Dir, cmd.Env = fx.Project, fx.BinEnv()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(within))))
		cmd.Process.Kill()
		cmd.Wait()
	}
	write(20, 30)
	start := time.Now()
	a.MustExec(t, "sync")
	whole := max(time.Since(start), 50*time.Millisecond)
	start = time.Now()
	b.MustExec(t, "sync")
	wholePull := max(time.Since(start), 50*time.Millisecond)
	for range 30 {
		write(3, 20)
		killed(a, whole)
		killed(b, wholePull)
	}
	a.MustExec(t, "sync")
	b.MustExec(t, "sync")
	for _, args := range [][]string{{"session", "list", "-a", "--json", "--limit", "1000"}, {"search", "word7", "-a", "--json", "--limit", "1000"}} {
		if ga, gb := normalJSON(t, a.MustExec(t, args...)), normalJSON(t, b.MustExec(t, args...)); ga != gb {
			t.Fatalf("loom %s differs after the killed syncs", strings.Join(args, " "))
		}
	}
	sa, ma := a.SessionCount(t)
	sb, mb := b.SessionCount(t)
	if sa != 110 || sa != sb || ma != mb {
		t.Fatalf("the first machine holds %d sessions, %d messages; the second %d, %d", sa, ma, sb, mb)
	}
	var hosts loomhub.Hosts
	resp := hub.Request(t, "GET", "/api/v1/sync/hosts", "")
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&hosts); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, a.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	host, err := st.SyncHost(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last, err := st.SyncLast(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts.Hosts) != 1 || hosts.Hosts[0].Host != string(host) || hosts.Hosts[0].Records != int64(last) || hosts.Hosts[0].Last != int64(last) {
		t.Fatalf("the hub holds %+v; want the first machine's %d records, once each", hosts.Hosts, last)
	}
}
