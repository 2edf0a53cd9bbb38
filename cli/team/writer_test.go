package team_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/team"
	"github.com/loomhq/loom/teamrun"
)

// postRecord posts r straight to the hub's API with token tok, as a
// client of one's own would, and returns the answer's status.
func postRecord(t *testing.T, hubBase, tok, teamID string, r team.Record) int {
	t.Helper()
	status, _ := postRecords(t, hubBase, tok, teamID, r)
	return status
}

// putRecords puts recs in team teamID's space on the hub with token
// tok, through the client every loom uses, and returns how many the hub
// had not held.
func putRecords(hubBase, tok, teamID string, recs ...team.Record) (int, error) {
	out := make([]loom.SyncRecord, len(recs))
	for i, r := range recs {
		out[i] = r.Sync()
	}
	return (&hub.Client{URL: hubBase, Token: tok}).Team(teamID).Put(context.Background(), out)
}

// TestNobodyWritesInAnothersName plays a member with her own signing
// keys who posts straight to the hub's API: records filed under another
// member's writer id, at his next indexes, signed by her or claiming to
// be his, are refused with 403, and his next records reach the team.
// Then the hub's operator files a record at his next index by hand: his
// sync's audit finds it (a record under his writer id he never sent),
// sets it aside and writes after it, and no machine applies it.
func TestNobodyWritesInAnothersName(t *testing.T) {
	hubDB, hubBase, tok, alice, created := startTeam(t)
	bob := newMember(t, "bob", hubBase, tok("bob"))
	carol := newMember(t, "carol", hubBase, tok("carol"))
	for _, m := range []*member{bob, carol} {
		alice.admit(t, m)
	}
	importSession(t, bob, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c11", "the first of bob's", "how", "so")
	bob.must(t, "team", "share", "--content", "--yes")
	bob.must(t, "team", "sync")
	bs := bob.teamState(t, created.ID)
	bobID, _, _ := teamrun.Local{Dir: filepath.Join(bob.fx.Home, "data", "teams")}.Identity()
	if !team.OwnsWriter(bobID.Fingerprint(), bs.Host) {
		t.Fatalf("bob's writer id %s is not bound to his key", bs.Host)
	}

	// Carol, with her own keys and the team's, files records at bob's
	// next index: as herself, and as bob.
	cs := carol.teamState(t, created.ID)
	carolID, _, _ := teamrun.Local{Dir: filepath.Join(carol.fx.Home, "data", "teams")}.Identity()
	epoch, _ := cs.Keys.Latest()
	pl, _ := json.Marshal(teamrun.Outgoing(team.ModeContent, &loom.Session{ID: "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c12", Key: "cli:x", Surface: "cli"}, nil))
	forged := []team.Record{}
	for _, author := range []string{carolID.Fingerprint(), bobID.Fingerprint()} {
		r, err := team.SealRecord(team.Header{Team: created.ID, Host: bs.Host, Index: bs.Next, Epoch: epoch, Author: author}, cs.Keys, carolID, pl)
		if err != nil {
			t.Fatal(err)
		}
		forged = append(forged, r)
	}
	// Under a writer id of her own, but claiming bob wrote it.
	r, _ := team.SealRecord(team.Header{Team: created.ID, Host: team.NewWriter(carolID.Fingerprint()), Index: 1, Epoch: epoch, Author: bobID.Fingerprint()}, cs.Keys, carolID, pl)
	forged = append(forged, r)
	for i, r := range forged {
		if status := postRecord(t, hubBase, carol.tok, created.ID, r); status != http.StatusForbidden {
			t.Fatalf("carol's record %d under bob's writer id or name: %d, want 403", i+1, status)
		}
	}

	// Bob's next record reaches the team.
	importSession(t, bob, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c13", "the numbat rollout", "when", "now")
	if out := bob.must(t, "team", "sync"); !strings.Contains(out, "sent 1 record ") {
		t.Fatalf("bob's sync: %s", out)
	}
	alice.must(t, "team", "sync")
	if out := alice.must(t, "session", "list", "--team", "core", "--all-projects"); !strings.Contains(out, "numbat") {
		t.Fatalf("bob's record after carol's did not reach alice: %s", out)
	}

	// The operator files a record at bob's next index by hand.
	pool, err := pgxpool.New(context.Background(), hubDB)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	bs = bob.teamState(t, created.ID)
	if _, err := pool.Exec(context.Background(), `INSERT INTO team_records (team_id, host_id, idx, epoch, header, body, received_at) VALUES ($1, $2, $3, $4, $5, $6, now())`,
		created.ID, bs.Host, bs.Next, forged[1].Epoch, forged[1].Header, forged[1].Body); err != nil {
		t.Fatal(err)
	}
	// Bob's audit finds a record under his writer id that he never sent:
	// his next records go after it (his log is not stopped there), and
	// the forged one is set aside on every machine, never applied.
	importSession(t, bob, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c14", "the dingo cutover", "why", "because")
	r2 := bob.run(t, "team", "sync")
	if r2.Code != 0 || !strings.Contains(r2.Stdout, "sent 1 record ") || !strings.Contains(r2.Stderr, "set aside") {
		t.Fatalf("bob's sync past the record the operator filed under his writer id: %d %s%s", r2.Code, r2.Stdout, r2.Stderr)
	}
	alice.must(t, "team", "sync")
	out := alice.must(t, "session", "list", "--team", "core", "--all-projects")
	if !strings.Contains(out, "dingo") {
		t.Fatalf("bob's record after the operator's did not reach alice: %s", out)
	}
	for _, m := range []*member{alice, bob} {
		if r := m.run(t, "session", "show", "--team", "core", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c12"); r.Code == 0 {
			t.Fatalf("%s applied the record carol forged and the operator filed under bob's writer id:\n%s", m.name, r.Stdout)
		}
	}
}

// TestHubRefusesAMadeUpHead: a member with his own keys posts straight
// to the hub's API records naming a chain head past the team's, or
// another hash at one of its entries. Each member would keep such a
// record apart and stop publishing (the hub may be hiding entries): the
// hub, which holds the chain, refuses them with 403, and alice's next
// sync publishes.
func TestHubRefusesAMadeUpHead(t *testing.T) {
	p := newPair(t)
	me, bs := signer(t, p.bob, p.id)
	epoch, _ := bs.Keys.Latest()
	host := team.NewWriter(me.Fingerprint())
	pl, _ := json.Marshal(teamrun.Outgoing(team.ModeContent, &loom.Session{ID: "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c21", Key: "cli:x", Surface: "cli"}, nil))
	for _, head := range []struct {
		seq  int64
		hash string
	}{{bs.Seq + 5, "made up"}, {bs.Seq, strings.Repeat("0", 64)}} {
		r, err := team.SealRecord(team.Header{Team: p.id, Host: host, Index: 1, Epoch: epoch, Author: me.Fingerprint(), ChainSeq: head.seq, ChainHead: head.hash}, bs.Keys, me, pl)
		if err != nil {
			t.Fatal(err)
		}
		if status := postRecord(t, p.hubURL, p.bob.tok, p.id, r); status != http.StatusForbidden {
			t.Fatalf("bob's record naming entry %d %q: %d, want 403", head.seq, head.hash, status)
		}
	}
	importSession(t, p.alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c22", "alice's bandicoot", "why", "because")
	p.alice.must(t, "team", "share", "--content", "--yes")
	if out := p.alice.must(t, "team", "sync"); strings.Contains(out, "hiding") || !strings.Contains(out, "sent 1 record ") {
		t.Fatalf("alice's sync: %s", out)
	}
}
