package team_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/team"
	"github.com/loomhq/loom/teamrun"
)

// TestHubServesAndBounds: the chain is served to the team's members and
// to the holder of an open invite, to no other hub user (a removed
// member included); an entry larger than its kind needs is refused with
// 413, and a member's key writing under more writer ids than a machine
// ever needs with 429.
func TestHubServesAndBounds(t *testing.T) {
	ctx := context.Background()
	_, hubBase, tok, alice, created := startTeam(t)
	eve := &hub.Client{URL: hubBase, Token: tok("eve")}
	if _, err := eve.TeamChain(ctx, created.ID, 0); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("a hub user who knows the team's id reads its chain: %v", err)
	}
	code := alice.invite(t)
	_, invID, _ := team.ParseCode(code)
	if chain, err := eve.TeamChainInvite(ctx, created.ID, "eve", invID); err != nil || len(chain) != 2 {
		t.Fatalf("the invite's holder reads the chain: %d entries, %v", len(chain), err)
	}
	if _, err := eve.TeamChainInvite(ctx, created.ID, "mallory", invID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("an invite's proof made for another hub user reads the chain: %v", err)
	}
	bob := newMember(t, "bob", hubBase, tok("bob"))
	bob.must(t, "team", "join", code, "--yes")
	if chain, err := eve.TeamChainInvite(ctx, created.ID, "eve", invID); chain != nil || err == nil || !strings.Contains(err.Error(), "used already") {
		t.Fatalf("a used invite's holder reads the chain: %v", err)
	}

	// Bob, with his own keys, posts a share entry of 100 KiB.
	bc := &hub.Client{URL: hubBase, Token: bob.tok}
	chain, err := bc.TeamChain(ctx, created.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := team.Verify(created.ID, created.Admin, chain)
	if err != nil {
		t.Fatal(err)
	}
	bobID, _, _ := teamrun.Local{Dir: filepath.Join(bob.fx.Home, "data", "teams")}.Identity()
	e := st.NewEntry(team.KindShare, bobID.Fingerprint(), time.Now())
	e.Epoch, e.Sealed = 1, make([]byte, 100<<10)
	big, _ := team.Sign(e, bobID)
	if err := bc.AppendTeamEntry(ctx, created.ID, st.Seq+1, big); loom.ErrorCode(err) != "too_large" {
		t.Fatalf("a share entry of 100 KiB: %v", err)
	}

	// Bob's key writes under one new writer id after another.
	ring := bob.teamState(t, created.ID).Keys
	status := 0
	for i := range hub.MaxTeamWriters + 1 {
		r, _ := team.SealRecord(team.Header{Team: created.ID, Host: team.NewWriter(bobID.Fingerprint()), Index: 1, Epoch: 1, Author: bobID.Fingerprint(), Session: strings.Repeat("b", 32)}, ring, bobID, []byte("{}"))
		if status = postRecord(t, hubBase, bob.tok, created.ID, r); status != http.StatusOK && i != hub.MaxTeamWriters {
			t.Fatalf("writer id %d of bob's key: %d", i+1, status)
		}
	}
	if status != http.StatusTooManyRequests {
		t.Fatalf("writer id %d of bob's key: %d, want 429", hub.MaxTeamWriters+1, status)
	}

	// Removed, bob reads the chain no more; his sync says why.
	alice.must(t, "team", "remove", "bob")
	if _, err := bc.TeamChain(ctx, created.ID, 0); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("a removed member reads the chain: %v", err)
	}
	if out := bob.must(t, "team", "sync"); !strings.Contains(out, "no longer a member") {
		t.Fatalf("the removed member's sync: %s", out)
	}
}
