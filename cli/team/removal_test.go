package team_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/team"
	"github.com/loomhq/loom/teamrun"
)

// startTeam starts a hub on PostgreSQL and alice's team core on it:
// the hub's database, its address, a maker of hub users' tokens, alice,
// and the team's id and admin.
func startTeam(t *testing.T) (hubDB, hubBase string, tok func(string) string, alice *member, created struct{ ID, Admin string }) {
	hubDB = clitest.FreshSchema(t)
	hub1, hubHome, _ := clitest.StartHub(t, hubDB)
	tok = func(u string) string { return hubToken(t, hubHome, hubDB, u) }
	alice = newMember(t, "alice", hub1.Base, tok("alice"))
	json.Unmarshal([]byte(alice.must(t, "team", "create", "core", "--json")), &created)
	return hubDB, hub1.Base, tok, alice, created
}

// savedKeys is what a copy of a machine's data directory opens: the
// keyring of its team.json and every keyring the chain wraps for its key
// pair.
func savedKeys(t *testing.T, dir, teamID string, st *team.State) []envelope.Key {
	t.Helper()
	l := teamrun.Local{Dir: filepath.Join(dir, "data", "teams")}
	s, err := l.Find(teamID)
	if err != nil {
		t.Fatal(err)
	}
	var out []envelope.Key
	for _, k := range s.Keys {
		out = append(out, k)
	}
	id, _, err := l.Identity()
	if err != nil {
		t.Fatal(err)
	}
	return append(out, chainKeys(st, id)...)
}

// chainKeys are the keys of every keyring the chain wraps for id.
func chainKeys(st *team.State, id *team.Identity) []envelope.Key {
	var out []envelope.Key
	for _, e := range st.Entries {
		if w := e.Keys[id.Fingerprint()]; w != nil {
			if ring, err := team.Unwrap(w, id); err == nil {
				for _, k := range ring {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

func copyTree(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	return to
}

// TestRemovalIsFinal plays a removed member and a removed machine who
// kept a copy of their whole data directory and the invite codes they
// made and never used: with the team's chain and every record read
// straight from the hub's PostgreSQL tables, nothing written after their
// removal opens with anything they hold, and their invites join no more.
func TestRemovalIsFinal(t *testing.T) {
	hubDB, hubBase, tok, alice, created := startTeam(t)
	bob := newMember(t, "bob", hubBase, tok("bob"))
	carol := newMember(t, "carol", hubBase, tok("carol"))
	alice.admit(t, bob)
	alice.admit(t, carol)
	laptop := newMember(t, "bob", hubBase, bob.tok)
	bob.admit(t, laptop, "--machine", "--label", "laptop")
	// Each makes a machine's invite and keeps its code unused.
	spare := bob.invite(t, "--machine", "--label", "spare")
	tablet := laptop.invite(t, "--machine", "--label", "tablet")
	carol.invite(t, "--machine", "--label", "desk")

	// The laptop goes: the tablet's invite it made goes with it.
	laptopDir := copyTree(t, laptop.fx.Home)
	out := alice.must(t, "team", "remove", "bob/laptop")
	if !strings.Contains(out, "revoking 1 open invites made by or for them (tablet)") || !strings.Contains(out, "wrapped for 5 keys: 3 members (alice, bob, carol), 2 open invites (desk, spare)") {
		t.Fatalf("the laptop's removal does not say how many keys of whom: %s", out)
	}
	// Bob goes: his spare's invite goes with him; carol's desk's stays.
	bobDir := copyTree(t, bob.fx.Home)
	out = alice.must(t, "team", "remove", "bob")
	if !strings.Contains(out, "revoking 1 open invites made by or for them (spare)") || !strings.Contains(out, "wrapped for 3 keys: 2 members (alice, carol), 1 open invite (desk)") {
		t.Fatalf("bob's removal does not say how many keys of whom: %s", out)
	}
	// Their invites join no more, on any machine.
	for _, code := range []string{spare, tablet} {
		m := newMember(t, "bob", hubBase, bob.tok)
		if r := m.run(t, "team", "join", code, "--yes"); r.Code == 0 || !strings.Contains(r.Stderr, "revoked when the member or machine") {
			t.Fatalf("a removed member's (or machine's) invite joins: %d %s%s", r.Code, r.Stdout, r.Stderr)
		}
	}

	// Alice writes after the removals.
	importSession(t, alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c07", "the quokka migration", "how do we move the quokka table", "Split it in two steps.")
	alice.must(t, "team", "share", "--content", "--yes")
	alice.must(t, "team", "sync")

	// What the hub's database holds, read as its operator would.
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, hubDB)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	rows, _ := pool.Query(ctx, `SELECT entry FROM team_chain WHERE team_id = $1 ORDER BY seq`, created.ID)
	chain, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	st, err := team.Verify(created.ID, created.Admin, chain)
	if err != nil {
		t.Fatal(err)
	}
	held := append(savedKeys(t, bobDir, created.ID, st), savedKeys(t, laptopDir, created.ID, st)...)
	for _, code := range []string{spare, tablet} {
		_, inv, err := team.ParseCode(code)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, chainKeys(st, inv)...)
	}
	if len(held) == 0 {
		t.Fatal("the removed member held no keys at all")
	}
	rows, _ = pool.Query(ctx, `SELECT header, body FROM team_records WHERE team_id = $1`, created.ID)
	recs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Header, Body []byte }])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		for _, k := range held {
			if _, err := envelope.Open(k, r.Header, r.Body[64:]); err == nil {
				t.Fatalf("a record written after the removal opens with a key the removed member or machine kept")
			}
		}
		if _, err := envelope.Open(alice.teamState(t, created.ID).Keys[st.Epoch], r.Header, r.Body[64:]); err != nil {
			t.Fatalf("the team's own key does not open its record: %v", err)
		}
	}
	if len(recs) == 0 {
		t.Fatal("the hub holds no record of alice's")
	}
}
