package team_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/loomhq/loom/team"
)

// TestCheckpointAsWhole checks that an entry checked against a
// checkpoint (State.Next: the state after the last entry verified) is
// taken or refused exactly as Verify of the whole chain with it does,
// to the same state, that a refusal leaves the checkpoint as it was, and
// that a checkpoint kept (MarshalCheckpoint) and read back is the same.
// The chains are TestRandomDepartures' random sequences; at every entry
// the candidates are the true next entry, an entry of elsewhere in the
// chain (replayed), the next with a byte altered, and entries the
// admin signs that the rules refuse after part of their work (a removal
// naming a wrong epoch, a rotation wrapped for nobody, a leave by the
// admin, a budget below 0) or take (a budget). Seeds are printed on
// failure; LOOM_ADVERSARY_SEED replays one, LOOM_ADVERSARY_RUNS sets
// how many run (default 20).
func TestCheckpointAsWhole(t *testing.T) {
	for _, seed := range adversarySeeds(20) {
		if msg := checkpointAsWhole(seed); msg != "" {
			t.Fatalf("seed %d (replay: LOOM_ADVERSARY_SEED=%d go test ./team -run TestCheckpointAsWhole): %s", seed, seed, msg)
		}
	}
}

func checkpointAsWhole(seed uint64) string {
	var p played
	if msg := departures(seed, 16, &p); msg != "" {
		return msg
	}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	admin := p.admin.Fingerprint()
	cp := must(team.Verify(teamID, "", p.chain[:1]))
	for i := 1; i < len(p.chain); i++ {
		whole := must(team.Verify(teamID, "", p.chain[:i]))
		if !reflect.DeepEqual(cp, whole) {
			return fmt.Sprintf("entry %d: the checkpoint is not the state Verify finds", i)
		}
		// Kept in a file and read back (as a member's machine keeps it
		// between commands), it is the same state, and checks the next
		// entries alike.
		cp = must(team.UnmarshalCheckpoint(must(cp.MarshalCheckpoint())))
		if !reflect.DeepEqual(cp, whole) {
			return fmt.Sprintf("entry %d: the checkpoint kept and read back is not the state Verify finds", i)
		}
		signed := func(mod func(e *team.Entry)) []byte {
			e := whole.NewEntry(team.KindRotate, admin, at)
			mod(e)
			return must(team.Sign(e, p.admin))
		}
		altered := append([]byte(nil), p.chain[i]...)
		altered[rng.IntN(len(altered))] ^= byte(1 + rng.IntN(255))
		var member string
		for fp := range whole.Members {
			if fp != admin && member == "" || fp != admin && fp < member {
				member = fp
			}
		}
		cands := map[string][]byte{
			"the next":             p.chain[i],
			"a replay":             p.chain[rng.IntN(len(p.chain))],
			"the next altered":     altered,
			"a rotation for none":  signed(func(e *team.Entry) { e.Epoch = whole.Epoch + 1 }),
			"a leave of the admin": signed(func(e *team.Entry) { e.Kind = team.KindLeave }),
			"a budget below 0":     signed(func(e *team.Entry) { e.Kind, e.Budget = team.KindBudget, &team.Budget{Records: -1} }),
			"a budget": signed(func(e *team.Entry) {
				e.Kind, e.Budget = team.KindBudget, &team.Budget{Records: int64(1 + rng.IntN(9)), EntryBytes: 1 << 20}
			}),
		}
		if member != "" {
			cands["a removal at a wrong epoch"] = signed(func(e *team.Entry) { e.Kind, e.Target, e.Epoch = team.KindRemove, member, whole.Epoch+2 })
		}
		// The hub's, without the entries' sealed shares and wrapped keys,
		// takes and refuses alike.
		vc := must(team.UnmarshalCheckpoint(must(whole.MarshalVerifierCheckpoint())))
		for name, c := range cands {
			next, nerr := cp.Next("", c)
			if _, verr := vc.Next("", c); (verr == nil) != (nerr == nil) || verr != nil && !errors.Is(verr, team.ErrForged) {
				return fmt.Sprintf("entry %d, %s: against the checkpoint %v, against the hub's %v", i+1, name, nerr, verr)
			}
			full, ferr := team.Verify(teamID, "", append(append([][]byte(nil), p.chain[:i]...), c))
			switch {
			case (nerr == nil) != (ferr == nil):
				return fmt.Sprintf("entry %d, %s: against the checkpoint %v, against the whole chain %v", i+1, name, nerr, ferr)
			case nerr != nil && !errors.Is(nerr, team.ErrForged):
				return fmt.Sprintf("entry %d, %s: refused against the checkpoint for %v, not as a forgery", i+1, name, nerr)
			case nerr == nil && !reflect.DeepEqual(next, full):
				return fmt.Sprintf("entry %d, %s: taken, to another state than the whole chain's", i+1, name)
			}
			if !reflect.DeepEqual(cp, whole) {
				return fmt.Sprintf("entry %d, %s: checking it changed the checkpoint", i+1, name)
			}
		}
		cp = must(cp.Next("", p.chain[i]))
	}
	if !reflect.DeepEqual(cp, must(team.Verify(teamID, "", p.chain))) {
		return "the checkpoint at the chain's end is not the state Verify finds"
	}
	return ""
}
