package team_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/team"
)

// hubChain is the team's chain as the hub's store holds it, verified.
func hubChain(t *testing.T, p *pair) *team.State {
	t.Helper()
	rows, err := p.pool.Query(context.Background(), `SELECT entry FROM team_chain WHERE team_id = $1 ORDER BY seq`, p.id)
	if err != nil {
		t.Fatal(err)
	}
	var chain [][]byte
	for rows.Next() {
		var b []byte
		rows.Scan(&b)
		chain = append(chain, b)
	}
	st, err := team.Verify(p.id, "", chain)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// hubProc starts another process of p's hub, on its store, with home's
// key (p.hubHome: the first process's).
func hubProc(t *testing.T, p *pair, home string) *clitest.ServeProc {
	t.Helper()
	return clitest.StartServeProc(t, []string{"LOOM_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH"), "LOOM_DB=" + p.hubDB}, "")
}

// keptCheckpoint waits until the hub's store keeps a checkpoint of p's
// team under the key of home's hub that ok takes, and returns it.
func keptCheckpoint(t *testing.T, p *pair, home string, ok func(seq int64, state []byte) bool) (int64, []byte) {
	t.Helper()
	d, err := paths.Resolve(func(k string) string {
		if k == "LOOM_HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(d.HubKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	var seq int64
	var state []byte
	for end := time.Now().Add(30 * time.Second); ; {
		err := p.pool.QueryRow(context.Background(), `SELECT seq, state FROM team_checkpoints WHERE team_id = $1 AND key_id = $2`, p.id, hub.CheckpointKeyID(key)).Scan(&seq, &state)
		if err == nil && ok(seq, state) {
			return seq, state
		}
		if time.Now().After(end) {
			t.Fatalf("the hub keeps no checkpoint of the team that the test takes (entry %d, %v)", seq, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHubCheckpointKept: the hub keeps its checkpoint of a team's chain
// in its store, and a process that starts takes it in rather than
// verifying the chain from its genesis; a checkpoint its operator edits
// is not taken. alice's appends make the hub keep one; with an entry
// behind it altered in team_chain, a hub process started with the same
// key appends the next entry (it never reads that entry again), and one
// with a key of its own refuses (it verifies the chain from its
// genesis). With the entry put back, the operator edits the kept
// checkpoint so that a key of his is the team's admin (its MAC left as
// it was): a process that starts says it does not take it, and refuses
// the budget entry that key signs, which chains to the head; it then
// keeps a checkpoint again, which the next process takes.
func TestHubCheckpointKept(t *testing.T) {
	p := newPair(t)
	ctx := context.Background()
	me, as := signer(t, p.alice, p.id)
	st := hubChain(t, p)
	share := func(i int) []byte {
		b, err := team.Share(st, me, as.Keys, team.Project{ID: fmt.Sprintf("%016x", i), Name: fmt.Sprintf("project %d", i), Mode: team.ModeContent}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	appendTo := func(base string, i int) error {
		b := share(i)
		if err := (&hub.Client{URL: base, Token: p.alice.tok}).AppendTeamEntry(ctx, p.id, st.Seq+1, b); err != nil {
			return err
		}
		return st.Apply("", b)
	}
	for i := range 2 * hub.CheckpointEvery {
		if err := appendTo(p.hubURL, i); err != nil {
			t.Fatal(err)
		}
	}
	kept, _ := keptCheckpoint(t, p, p.hubHome, func(seq int64, _ []byte) bool { return seq > hub.CheckpointEvery })

	// Entry 2, behind the checkpoint, altered: its signature.
	var entry2 []byte
	if err := p.pool.QueryRow(ctx, `SELECT entry FROM team_chain WHERE team_id = $1 AND seq = 2`, p.id).Scan(&entry2); err != nil {
		t.Fatal(err)
	}
	var s team.Signed
	json.Unmarshal(entry2, &s)
	s.Sig = bytes.Clone(s.Sig)
	s.Sig[0] ^= 1
	altered, _ := json.Marshal(s)
	setEntry2 := func(b []byte) {
		if _, err := p.pool.Exec(ctx, `UPDATE team_chain SET entry = $2 WHERE team_id = $1 AND seq = 2`, p.id, b); err != nil {
			t.Fatal(err)
		}
	}
	setEntry2(altered)
	restarted := hubProc(t, p, p.hubHome)
	if err := appendTo(restarted.Base, 100); err != nil {
		t.Fatalf("a hub process that starts with the checkpoint kept at entry %d read the chain behind it: %v", kept, err)
	}
	other := hubProc(t, p, t.TempDir())
	if err := appendTo(other.Base, 101); err == nil {
		t.Fatal("a hub process with a key of its own took a chain whose entry 2 is altered")
	}
	setEntry2(entry2)

	// The operator makes a key of his the admin in the kept checkpoint.
	seq, state := keptCheckpoint(t, p, p.hubHome, func(int64, []byte) bool { return true })
	forged, err := team.UnmarshalCheckpoint(state)
	if err != nil {
		t.Fatal(err)
	}
	eve, err := team.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	em := eve.Public("eve", "eve")
	forged.Admin = eve.Fingerprint()
	forged.Members[eve.Fingerprint()], forged.Past[eve.Fingerprint()] = em, em
	edited, err := forged.MarshalCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.pool.Exec(ctx, `UPDATE team_checkpoints SET state = $2 WHERE team_id = $1 AND seq = $3`, p.id, edited, seq); err != nil {
		t.Fatal(err)
	}
	// eve's state goes on to the head as the hub's would.
	rows, err := p.pool.Query(ctx, `SELECT entry FROM team_chain WHERE team_id = $1 AND seq > $2 ORDER BY seq`, p.id, seq)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var b []byte
		rows.Scan(&b)
		if err := forged.Apply("", b); err != nil {
			t.Fatal(err)
		}
	}
	if forged.Seq != st.Seq {
		t.Fatalf("eve's state is at entry %d, the chain at %d", forged.Seq, st.Seq)
	}
	budget, err := team.SetBudget(forged, eve, team.Budget{Records: 1}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := forged.Next("", budget); err != nil {
		t.Fatalf("eve's entry does not even follow her own state: %v", err)
	}
	third := hubProc(t, p, p.hubHome)
	err = (&hub.Client{URL: third.Base, Token: p.tok("eve")}).AppendTeamEntry(ctx, p.id, st.Seq+1, budget)
	if err == nil {
		t.Fatal("the hub took an entry signed by a key its operator made the admin in the kept checkpoint")
	}
	if !strings.Contains(err.Error(), "not signed by the admin") {
		t.Errorf("eve's entry refused for another reason: %v", err)
	}
	if !strings.Contains(third.Stderr.String(), "team checkpoint not taken") {
		t.Errorf("the hub's log does not say it did not take the checkpoint:\n%s", third.Stderr.String())
	}
	if err := appendTo(third.Base, 102); err != nil {
		t.Fatal(err)
	}
	keptCheckpoint(t, p, p.hubHome, func(_ int64, state []byte) bool { return !bytes.Equal(state, edited) })
	setEntry2(altered)
	if err := appendTo(hubProc(t, p, p.hubHome).Base, 103); err != nil {
		t.Fatalf("the checkpoint kept again is not taken: %v", err)
	}
}
