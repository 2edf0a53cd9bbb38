package team_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom/team"
)

// TestTeamWayBackFromAFork: the hub's operator shows bob a chain whose
// next entry alice signed but never appended (a fork), then takes it
// away, and alice appends another. Every loom team command on bob's
// machine refuses the chain, and says loom team fork shows both heads;
// loom team fork prints bob's head and the hub's, which is alice's
// loom team head; choosing his own keeps refusing, choosing the hub's
// re-anchors him, and his sync works again.
func TestTeamWayBackFromAFork(t *testing.T) {
	p := newPair(t)
	alice, bob := p.alice, p.bob
	ctx := context.Background()
	rows, _ := p.pool.Query(ctx, `SELECT entry FROM team_chain WHERE team_id = $1 ORDER BY seq`, p.id)
	chain, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	st, err := team.Verify(p.id, p.admin, chain)
	if err != nil {
		t.Fatal(err)
	}
	aliceID, as := signer(t, alice, p.id)
	forked, _, err := team.Invite(st, aliceID, as.Keys, "forked", nil, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.pool.Exec(ctx, `INSERT INTO team_chain (team_id, seq, entry, received_at) VALUES ($1, $2, $3, now())`, p.id, st.Seq+1, forked); err != nil {
		t.Fatal(err)
	}
	if h := teamHead(t, bob); h.Seq != st.Seq+1 || h.Head != team.Hash(forked) {
		t.Fatalf("bob shown the fork: %+v", h)
	}
	if _, err := p.pool.Exec(ctx, `DELETE FROM team_chain WHERE team_id = $1 AND seq = $2`, p.id, st.Seq+1); err != nil {
		t.Fatal(err)
	}
	alice.invite(t, "--label", "real")
	truth := teamHead(t, alice)

	r := bob.run(t, "team", "sync")
	if r.Code != 1 || !strings.Contains(r.Stderr, "the chain was rewritten") || !strings.Contains(r.Stderr, "loom team fork shows both heads") {
		t.Fatalf("bob's sync on the other chain: %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
	out := bob.must(t, "team", "fork")
	t.Logf("bob's loom team fork:\n%s", out)
	if !strings.Contains(out, "this machine verified entry 4: "+team.Hash(forked)) || !strings.Contains(out, "the hub's head, entry 4:      "+truth.Head) || !strings.Contains(out, "invite by alice") {
		t.Fatalf("bob's fork does not show both heads:\n%s", out)
	}
	if out := bob.must(t, "team", "fork", "--choose", team.Hash(forked)[:8]); !strings.Contains(out, "keeps entry 4") {
		t.Fatalf("bob keeps his own head: %s", out)
	}
	if r := bob.run(t, "team", "sync"); r.Code != 1 {
		t.Fatalf("bob's sync after keeping his head: %d %s", r.Code, r.Stdout)
	}
	if r := bob.run(t, "team", "fork", "--choose", "00000000"); r.Code == 0 {
		t.Fatalf("bob chose a head neither his nor the hub's: %s", r.Stdout)
	}
	out = bob.must(t, "team", "fork", "--choose", truth.Head[:8])
	t.Logf("bob's loom team fork --choose:\n%s", out)
	if !strings.Contains(out, "now verifies the hub's chain, entry 4, head "+truth.Head) {
		t.Fatalf("bob's re-anchor: %s", out)
	}
	if r := bob.run(t, "team", "sync"); r.Code != 0 {
		t.Fatalf("bob's sync after the re-anchor: %d %s", r.Code, r.Stderr)
	}
	if h := teamHead(t, bob); h != truth {
		t.Fatalf("bob's head %+v, alice's %+v", h, truth)
	}
	if out := bob.must(t, "team", "fork"); !strings.Contains(out, "no fork") {
		t.Fatalf("bob's fork after the re-anchor: %s", out)
	}
}
