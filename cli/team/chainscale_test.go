package team_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/team"
)

// TestChainScale measures, on a team whose chain holds LOOM_CHAIN_SCALE
// more entries of about 60 KiB each (shares the admin signs, filed on
// the hub's PostgreSQL by hand), how long the hub takes to append an
// entry (the median of 5, over the API) and how long a member's loom
// team head takes (the first, which reads the entries it has not
// verified, and the next, which has verified them all). It measures and
// asserts nothing else; docs/team.md gives its figures. Skipped unless
// LOOM_CHAIN_SCALE is set.
func TestChainScale(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("LOOM_CHAIN_SCALE"))
	if err != nil {
		t.Skip("LOOM_CHAIN_SCALE=N measures a chain of N more entries")
	}
	p := newPair(t)
	me, as := signer(t, p.alice, p.id)
	p.bob.must(t, "team", "head")
	ctx := context.Background()
	st := hubChain(t, p)
	name := strings.Repeat("w", 33<<10)
	share := func(i int) []byte {
		b, err := team.Share(st, me, as.Keys, team.Project{ID: fmt.Sprintf("%016x", i), Name: name, Mode: team.ModeContent}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bytes := 0
	for i := range n {
		b := share(i)
		if err := st.Apply("", b); err != nil {
			t.Fatal(err)
		}
		if _, err := p.pool.Exec(ctx, `INSERT INTO team_chain (team_id, seq, entry, received_at) VALUES ($1, $2, $3, now())`, p.id, st.Seq, b); err != nil {
			t.Fatal(err)
		}
		bytes += len(b)
	}
	c := &hub.Client{URL: p.hubURL, Token: p.alice.tok}
	var appends []time.Duration
	for i := range 6 {
		b := share(n + i)
		start := time.Now()
		if err := c.AppendTeamEntry(ctx, p.id, st.Seq+1, b); err != nil {
			t.Fatal(err)
		}
		if i > 0 { // the first takes in the entries filed by hand
			appends = append(appends, time.Since(start))
		}
		st.Apply("", b)
		bytes += len(b)
	}
	slices.Sort(appends)
	head := func() time.Duration {
		start := time.Now()
		p.bob.must(t, "team", "head")
		return time.Since(start)
	}
	first, next := head(), head()
	if os.Getenv("LOOM_CHAIN_SCALE_PROFILE") != "" {
		for range 3 {
			t.Logf("again %s", head())
		}
	}
	t.Logf("chain of %d entries (%.1f MB more): append %s (median of 5), team head %s first, %s next",
		st.Seq, float64(bytes)/1e6, appends[2].Round(time.Millisecond), first.Round(time.Millisecond), next.Round(time.Millisecond))

	// A hub process that starts: with the key of the first (it takes
	// in the checkpoint kept in the store), and with one of its own (it
	// verifies the chain from its genesis).
	_, state := keptCheckpoint(t, p, p.hubHome, func(seq int64, _ []byte) bool { return seq > int64(n) })
	i := n + 6
	restart := func(home string) (time.Duration, time.Duration) {
		base := hubProc(t, p, home).Base
		c := &hub.Client{URL: base, Token: p.alice.tok}
		var ds []time.Duration
		for range 6 {
			b := share(i)
			i++
			start := time.Now()
			if err := c.AppendTeamEntry(ctx, p.id, st.Seq+1, b); err != nil {
				t.Fatal(err)
			}
			ds = append(ds, time.Since(start))
			st.Apply("", b)
		}
		rest := ds[1:]
		slices.Sort(rest)
		return ds[0], rest[2]
	}
	kf, kn := restart(p.hubHome)
	gf, gn := restart(t.TempDir())
	t.Logf("a hub process that starts: checkpoint kept (%.1f MB): first append %s, next %s (median of 5); without (a key of its own): first append %s, next %s",
		float64(len(state))/1e6, kf.Round(time.Millisecond), kn.Round(time.Millisecond), gf.Round(time.Millisecond), gn.Round(time.Millisecond))
}
