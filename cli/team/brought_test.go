package team_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/team"
)

// TestMachineLeavesWithWhatItBroughtIn plays a stolen laptop: before its
// owner notices, the thief has it invite another machine, which joins
// with the thief's own hub token, and has that machine make an invite in
// turn. loom team invites and members name the laptop as the machine
// that made the invite; loom team remove bob/laptop names the machine
// that goes with it and asks (off a terminal it sends nothing without
// --yes), then removes both and revokes the invite the thief's machine
// made. Nothing written after opens with any key either machine holds,
// nor with the invite's code, and the thief's machine reads no more.
func TestMachineLeavesWithWhatItBroughtIn(t *testing.T) {
	p := newPair(t)
	alice, bob := p.alice, p.bob
	laptop := newMember(t, "laptop", p.hubURL, bob.tok)
	bob.admit(t, laptop, "--machine", "--label", "laptop")
	thiefbox := newMember(t, "thiefbox", p.hubURL, p.tok("thief"))
	laptop.admit(t, thiefbox, "--machine", "--label", "thiefbox")
	spare := thiefbox.invite(t, "--machine", "--label", "spare")

	invites := alice.must(t, "team", "invites")
	if !strings.Contains(invites, "thiefbox     used") || !strings.Contains(invites, "machine of bob, made by bob/laptop") || !strings.Contains(invites, "joined by bob/thiefbox") ||
		!strings.Contains(invites, "made by bob/thiefbox") {
		t.Fatalf("alice's invites do not say which machine made each:\n%s", invites)
	}
	members := alice.must(t, "team", "members")
	if !strings.Contains(members, "machine thiefbox") || !strings.Contains(members, "invited by bob/laptop") {
		t.Fatalf("alice's members do not say which machine invited each:\n%s", members)
	}
	t.Logf("alice's invites:\n%s\nmembers:\n%s", invites, members)

	r := alice.run(t, "team", "remove", "bob/laptop")
	if r.Code != 2 || !strings.Contains(r.Stderr, "bob/laptop goes with every machine that joined through its invites: bob/thiefbox") || !strings.Contains(r.Stderr, "--yes") {
		t.Fatalf("alice's remove off a terminal without --yes: %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
	if out := alice.must(t, "team", "members"); !strings.Contains(out, "machine thiefbox") {
		t.Fatalf("a remove not confirmed removed something:\n%s", out)
	}
	out := alice.must(t, "team", "remove", "bob/laptop", "--yes")
	t.Logf("alice's remove: %s", out)
	for _, w := range []string{"removed laptop", "with the machines that joined through its invites (bob/thiefbox)", "revoking 1 open invites made by or for them (spare)", "wrapped for 2 keys: 2 members (alice, bob)"} {
		if !strings.Contains(out, w) {
			t.Fatalf("alice's remove does not say %q: %s", w, out)
		}
	}
	if out := alice.must(t, "team", "members"); strings.Contains(out, "thiefbox") || strings.Contains(out, "laptop") {
		t.Fatalf("alice's members after the removal:\n%s", out)
	}

	importSession(t, alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9b11", "after the laptop", "written after the laptop went", "Done.")
	alice.must(t, "team", "share", "--content", "--yes")
	alice.must(t, "team", "sync")
	if out := thiefbox.must(t, "team", "sync"); !strings.Contains(out, "no longer a member") {
		t.Fatalf("the thief's machine's sync: %s", out)
	}
	if r := newMember(t, "spare", p.hubURL, p.tok("thief")).run(t, "team", "join", spare, "--yes"); r.Code == 0 {
		t.Fatalf("the thief's machine's invite joins after the removal: %s", r.Stdout)
	}

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
	held := append(savedKeys(t, laptop.fx.Home, p.id, st), savedKeys(t, thiefbox.fx.Home, p.id, st)...)
	_, inv, err := team.ParseCode(spare)
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, chainKeys(st, inv)...)
	rows, _ = p.pool.Query(ctx, `SELECT header, body FROM team_records WHERE team_id = $1`, p.id)
	recs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Header, Body []byte }])
	if err != nil || len(recs) == 0 {
		t.Fatalf("the hub's records: %d %v", len(recs), err)
	}
	for _, r := range recs {
		for _, k := range held {
			if _, err := envelope.Open(k, r.Header, r.Body[64:]); err == nil {
				t.Fatal("a record written after the removal opens with a key the laptop, the machine it invited or its invite holds")
			}
		}
	}
	var h team.Header
	json.Unmarshal(recs[0].Header, &h)
	if h.Epoch != st.Epoch {
		t.Fatalf("alice's record is of epoch %d, the chain's %d", h.Epoch, st.Epoch)
	}
}
