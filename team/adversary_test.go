package team_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom/team"
)

// TestRandomDepartures drives a team's chain through random sequences
// of invites (of members by the admin, of machines by any member or
// machine, some left open), joins, removals, leaves and rotations, and
// after every step checks it against a model of its own that knows who
// invited whom: the chain verifies; who is in the team is who the model
// says (a member goes with every machine of theirs, a machine with
// every machine that joined through its invites, and so on); and
// nothing written after a departure opens with any key the departed
// held while in the team, nor with an open invite they made (invariant
// 2 of docs/team.md). Each sequence's seed is printed on failure;
// LOOM_ADVERSARY_SEED replays one, LOOM_ADVERSARY_RUNS sets how many
// run (default 30).
func TestRandomDepartures(t *testing.T) {
	for _, seed := range adversarySeeds(30) {
		if msg := departures(seed, 24, nil); msg != "" {
			t.Fatalf("seed %d (replay: LOOM_ADVERSARY_SEED=%d go test ./team -run TestRandomDepartures): %s", seed, seed, msg)
		}
	}
}

// adversarySeeds are the seeds a random test of the chain runs: runs
// random ones (LOOM_ADVERSARY_RUNS sets how many), or the one
// LOOM_ADVERSARY_SEED replays.
func adversarySeeds(runs int) []uint64 {
	if s, err := strconv.ParseUint(os.Getenv("LOOM_ADVERSARY_SEED"), 10, 64); err == nil {
		return []uint64{s}
	}
	if n, err := strconv.Atoi(os.Getenv("LOOM_ADVERSARY_RUNS")); err == nil {
		runs = n
	}
	seeds := make([]uint64, runs)
	for i := range seeds {
		seeds[i] = rand.Uint64()
	}
	return seeds
}

// key is one key pair of the model: a member's, a machine's or an
// invite's.
type key struct {
	id     *team.Identity
	member string // the member it is, or is a machine of (fingerprints)
	via    string // the key whose invite it joined by
	in     bool
	held   map[string]bool // the IDs of every team key it opened while in the team
}

// played is what a sequence of departures made: its chain and the
// admin's keys.
type played struct {
	chain [][]byte
	admin *team.Identity
}

// departures plays one sequence of steps under seed and returns what
// broke, "" when nothing did; out (when not nil) gets the chain played.
func departures(seed uint64, steps int, out *played) (msg string) {
	rng := rand.New(rand.NewPCG(seed, seed))
	admin := must(team.NewIdentity())
	b, ring, err := team.Create(teamID, "core", "alice", "alice", admin, at)
	if err != nil {
		return err.Error()
	}
	chain := [][]byte{b}
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
		if out != nil {
			out.chain, out.admin = chain, admin
		}
	}()
	keys := map[string]*key{admin.Fingerprint(): {id: admin, member: admin.Fingerprint(), in: true, held: map[string]bool{}}}
	var open []*key // invites left open, with the key that made them in via
	state := func() *team.State { return must(team.Verify(teamID, admin.Fingerprint(), chain)) }
	add := func(b []byte, err error) {
		if err != nil {
			panic(err)
		}
		chain = append(chain, b)
	}
	inTeam := func() []*key {
		var out []*key
		for _, k := range keys {
			if k.in {
				out = append(out, k)
			}
		}
		slices.SortFunc(out, func(a, b *key) int { return strings.Compare(a.id.Fingerprint(), b.id.Fingerprint()) })
		return out
	}
	ringOf := func(st *team.State, k *key) team.Keyring { return must(team.Keys(st, k.id)) }
	// goes is the model's own answer to who leaves with k.
	goes := func(k *key) map[string]bool {
		out := map[string]bool{k.id.Fingerprint(): true}
		if k.member == k.id.Fingerprint() {
			for fp, o := range keys {
				if o.in && o.member == k.member {
					out[fp] = true
				}
			}
		}
		for more := true; more; {
			more = false
			for fp, o := range keys {
				if o.in && !out[fp] && out[o.via] {
					out[fp], more = true, true
				}
			}
		}
		return out
	}
	var log []string
	for step := range steps {
		st := state()
		members := inTeam()
		switch m := rng.IntN(6); {
		case m == 0 || len(members) < 3: // the admin invites a member, who joins
			b, inv, err := team.Invite(st, admin, ring, fmt.Sprintf("m%d", step), nil, false, at)
			add(b, err)
			me := must(team.NewIdentity())
			b, _, err = team.Join(state(), inv, me, fmt.Sprintf("m%d", step), "u", at)
			add(b, err)
			keys[me.Fingerprint()] = &key{id: me, member: me.Fingerprint(), via: admin.Fingerprint(), in: true, held: map[string]bool{}}
			log = append(log, "member m"+strconv.Itoa(step))
		case m <= 2: // a member or machine invites a machine; it joins, or the invite stays open
			by := members[rng.IntN(len(members))]
			b, inv, err := team.Invite(st, by.id, ringOf(st, by), fmt.Sprintf("d%d", step), nil, true, at)
			add(b, err)
			if rng.IntN(3) == 0 {
				open = append(open, &key{id: inv, via: by.id.Fingerprint()})
				log = append(log, "open invite by "+st.Past[by.id.Fingerprint()].Name)
				break
			}
			me := must(team.NewIdentity())
			b, _, err = team.Join(state(), inv, me, fmt.Sprintf("d%d", step), "u", at)
			add(b, err)
			keys[me.Fingerprint()] = &key{id: me, member: by.member, via: by.id.Fingerprint(), in: true, held: map[string]bool{}}
			log = append(log, fmt.Sprintf("machine d%d by %s", step, st.Past[by.id.Fingerprint()].Name))
		case m <= 4: // the admin removes a member or machine, or one leaves and the admin rotates
			var cands []*key
			for _, k := range members {
				if k.id.Fingerprint() != admin.Fingerprint() {
					cands = append(cands, k)
				}
			}
			if len(cands) == 0 {
				continue
			}
			k := cands[rng.IntN(len(cands))]
			gone := goes(k)
			if m == 3 {
				b, nring, err := team.Rotate(st, admin, ring, k.id.Fingerprint(), at)
				add(b, err)
				ring = nring
				log = append(log, "remove "+st.Past[k.id.Fingerprint()].Name)
			} else {
				add(team.Leave(st, k.id, at))
				b, nring, err := team.Rotate(state(), admin, ring, "", at)
				add(b, err)
				ring = nring
				log = append(log, "leave "+st.Past[k.id.Fingerprint()].Name)
			}
			for fp := range gone {
				keys[fp].in = false
			}
		default:
			b, nring, err := team.Rotate(st, admin, ring, "", at)
			add(b, err)
			ring = nring
			log = append(log, "rotate")
		}
		st = state()
		latest, newest := ring.Latest()
		for fp, k := range keys {
			if st.In(fp) != k.in {
				return fmt.Sprintf("after %v: %s is in the team %v, the model says %v", log, st.Past[fp].Name, st.In(fp), k.in)
			}
			if k.in {
				for _, x := range ringOf(st, k) {
					k.held[x.ID()] = true
				}
				continue
			}
			if st.Holders[latest][fp] || k.held[newest.ID()] {
				return fmt.Sprintf("after %v: %s, gone, holds epoch %d's key", log, st.Past[fp].Name, latest)
			}
		}
		for _, inv := range open {
			if keys[inv.via].in {
				continue
			}
			if st.InviteError(inv.id.Fingerprint(), at) == nil {
				return fmt.Sprintf("after %v: an invite made by %s, gone, still joins", log, st.Past[inv.via].Name)
			}
			if r, err := team.Keys(st, inv.id); err == nil && r[latest].ID() == newest.ID() {
				return fmt.Sprintf("after %v: an invite made by %s, gone, opens epoch %d", log, st.Past[inv.via].Name, latest)
			}
		}
	}
	return ""
}
