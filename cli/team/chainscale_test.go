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
	var chain [][]byte
	rows, err := p.pool.Query(ctx, `SELECT entry FROM team_chain WHERE team_id = $1 ORDER BY seq`, p.id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var b []byte
		rows.Scan(&b)
		chain = append(chain, b)
	}
	st, err := team.Verify(p.id, "", chain)
	if err != nil {
		t.Fatal(err)
	}
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
}
