package team_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/team"
)

const teamID = "0123456789abcdef0123456789abcdef"

var at = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// must returns v, or fails the test (by a panic, which the test
// reports) on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func identity(t *testing.T) *team.Identity { return must(team.NewIdentity()) }

// world is a team as its chain makes it: the admin and two members who
// joined by invites.
type world struct {
	chain             [][]byte
	admin, bob, carol *team.Identity
	ring              team.Keyring
}

func (w *world) state(t *testing.T) *team.State {
	t.Helper()
	return must(team.Verify(teamID, w.admin.Fingerprint(), w.chain))
}

func (w *world) add(t *testing.T, b []byte, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	w.chain = append(w.chain, b)
	w.state(t)
}

func (w *world) join(t *testing.T, me *team.Identity, name string) team.Keyring {
	t.Helper()
	b, inv, err := team.Invite(w.state(t), w.admin, w.ring, "for-"+name, nil, false, at)
	w.add(t, b, err)
	b, ring, err := team.Join(w.state(t), inv, me, name, name, at)
	w.add(t, b, err)
	return ring
}

func newWorld(t *testing.T) *world {
	w := &world{admin: identity(t), bob: identity(t), carol: identity(t)}
	b, ring, err := team.Create(teamID, "core", "alice", "alice", w.admin, at)
	w.ring = ring
	w.add(t, b, err)
	w.join(t, w.bob, "bob")
	w.join(t, w.carol, "carol")
	return w
}

func TestChainMembers(t *testing.T) {
	w := newWorld(t)
	st := w.state(t)
	var names []string
	for _, m := range st.SortedMembers() {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, ","); got != "alice,bob,carol" {
		t.Fatalf("members %s", got)
	}
	// Each member opens the same key from the chain alone.
	for _, id := range []*team.Identity{w.admin, w.bob, w.carol} {
		ring := must(team.Keys(st, id))
		if ring[1].ID() != w.ring[1].ID() {
			t.Fatalf("member's key %s, admin's %s", ring[1].ID(), w.ring[1].ID())
		}
	}
	// A stranger's keys open nothing.
	if _, err := team.Keys(st, identity(t)); err == nil {
		t.Fatal("a stranger opened the team's keys")
	}
}

func TestChainPinnedAdmin(t *testing.T) {
	w := newWorld(t)
	_, err := team.Verify(teamID, identity(t).Fingerprint(), w.chain)
	if !errors.Is(err, team.ErrForged) || !strings.Contains(err.Error(), "as pinned") {
		t.Fatalf("a chain of another admin than pinned: %v", err)
	}
	// A whole chain made up by someone else (the hub's operator) with the
	// same team id is not the pinned admin's.
	mallory := identity(t)
	b, _, err := team.Create(teamID, "core", "alice", "alice", mallory, at)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := team.Verify(teamID, w.admin.Fingerprint(), [][]byte{b}); !errors.Is(err, team.ErrForged) {
		t.Fatalf("a made-up genesis: %v", err)
	}
}

func TestChainForgedReplayedReordered(t *testing.T) {
	w := newWorld(t)
	st := w.state(t)
	mallory := identity(t)

	// Forged: an invite signed by a member claiming to be the admin.
	e := st.NewEntry(team.KindInvite, st.Admin, at)
	e.Invite = mallory.Public("m", "")
	e.Keys = map[string][]byte{e.Invite.Fingerprint(): []byte("x")}
	forged := must(team.Sign(e, w.bob))
	// Forged: the admin's invite, altered after signing.
	good, _ := must2(t)(team.Invite(st, w.admin, w.ring, "x", nil, false, at))
	var s team.Signed
	json.Unmarshal(good, &s)
	s.Body = []byte(strings.Replace(string(s.Body), `"kind":"invite"`, `"kind":"rotate"`, 1))
	altered, _ := json.Marshal(s)
	// Forged: a join by an invite that the admin never made.
	fakeInvite := identity(t)
	je := st.NewEntry(team.KindJoin, fakeInvite.Fingerprint(), at)
	je.Invite, je.Member = fakeInvite.Public("x", ""), mallory.Public("mallory", "mallory")
	je.Keys = map[string][]byte{mallory.Fingerprint(): []byte("x")}
	fakeJoin := must(team.Sign(je, fakeInvite))
	// Forged: a removal signed by a member.
	re := st.NewEntry(team.KindRemove, st.Admin, at)
	re.Target, re.Epoch = w.carol.Fingerprint(), 2
	memberRemove := must(team.Sign(re, w.bob))

	for name, extra := range map[string][]byte{
		"forged signature":    forged,
		"altered entry":       altered,
		"join without invite": fakeJoin,
		"removal by a member": memberRemove,
		"replayed genesis":    w.chain[0],
		"replayed join":       w.chain[2],
		"replayed last entry": w.chain[len(w.chain)-1],
		"junk":                []byte(`{"body":"e30=","sig":""}`),
		"not JSON":            []byte("hello"),
	} {
		chain := append(append([][]byte{}, w.chain...), extra)
		if _, err := team.Verify(teamID, w.admin.Fingerprint(), chain); !errors.Is(err, team.ErrForged) {
			t.Errorf("%s: not refused: %v", name, err)
		}
	}
	// Re-ordered: two entries swapped, or one dropped.
	swapped := append([][]byte{}, w.chain...)
	swapped[1], swapped[2] = swapped[2], swapped[1]
	dropped := append(append([][]byte{}, w.chain[:1]...), w.chain[2:]...)
	for name, chain := range map[string][][]byte{"swapped": swapped, "dropped": dropped} {
		if _, err := team.Verify(teamID, w.admin.Fingerprint(), chain); !errors.Is(err, team.ErrForged) {
			t.Errorf("%s: not refused: %v", name, err)
		}
	}
}

func must2(t *testing.T) func([]byte, *team.Identity, error) ([]byte, *team.Identity) {
	return func(b []byte, id *team.Identity, err error) ([]byte, *team.Identity) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b, id
	}
}

func TestInviteOnce(t *testing.T) {
	w := newWorld(t)
	b, inv, err := team.Invite(w.state(t), w.admin, w.ring, "dave", nil, false, at)
	w.add(t, b, err)
	b, _, err = team.Join(w.state(t), inv, identity(t), "dave", "dave", at)
	w.add(t, b, err)
	// The client refuses a second join with it…
	if _, _, err := team.Join(w.state(t), inv, identity(t), "eve", "eve", at); err == nil {
		t.Fatal("a second join with one invite")
	}
	// …and so does every client reading a chain that holds one.
	st := w.state(t)
	e := st.NewEntry(team.KindJoin, inv.Fingerprint(), at)
	eve := identity(t)
	e.Invite, e.Member = st.Past[inv.Fingerprint()], eve.Public("eve", "eve")
	e.Keys = map[string][]byte{eve.Fingerprint(): must(team.Wrap(w.ring, e.Member.Box))}
	second := must(team.Sign(e, inv))
	if _, err := team.Verify(teamID, w.admin.Fingerprint(), append(w.chain, second)); !errors.Is(err, team.ErrForged) {
		t.Fatalf("a second join in the chain: %v", err)
	}
}

func TestRemoveRotates(t *testing.T) {
	w := newWorld(t)
	carolRing := must(team.Keys(w.state(t), w.carol))
	b, ring, err := team.Rotate(w.state(t), w.admin, w.ring, w.carol.Fingerprint(), at)
	w.add(t, b, err)
	st := w.state(t)
	if st.Members[w.carol.Fingerprint()] != nil || st.Epoch != 2 {
		t.Fatalf("after removal: members %d, epoch %d", len(st.Members), st.Epoch)
	}
	// Bob gets the new key from the chain; carol does not.
	if got := must(team.Keys(st, w.bob)); got[2].ID() != ring[2].ID() {
		t.Fatal("bob lacks the new key")
	}
	if got, _ := team.Keys(st, w.carol); got != nil && got[2] != (envelope.Key{}) {
		t.Fatal("the removed member opened the new key")
	}
	// What bob writes after the removal, carol's saved keys do not open.
	rec := must(team.SealRecord(team.Header{Team: teamID, Host: "h1", Index: 1, Epoch: 2, Author: w.bob.Fingerprint()}, ring, w.bob, []byte("after the removal")))
	if _, _, err := team.OpenRecord(st, carolRing, rec); !errors.Is(err, envelope.ErrWrongKey) {
		t.Fatalf("carol's saved keys on a record after her removal: %v", err)
	}
	for _, k := range carolRing {
		if _, err := envelope.Open(k, rec.Header, rec.Body[64:]); err == nil {
			t.Fatal("carol's saved key opened a record written after her removal")
		}
	}
	if _, p, err := team.OpenRecord(st, must(team.Keys(st, w.bob)), rec); err != nil || string(p) != "after the removal" {
		t.Fatalf("bob opens it: %q %v", p, err)
	}
	// A record carol writes now, under the old epoch, is refused: she
	// holds no key of the current one and is no member.
	old := must(team.SealRecord(team.Header{Team: teamID, Host: "h2", Index: 1, Epoch: 2, Author: w.carol.Fingerprint()}, ring, w.carol, []byte("x")))
	if _, _, err := team.OpenRecord(st, ring, old); !errors.Is(err, team.ErrNotMember) {
		t.Fatalf("a removed member's record: %v", err)
	}
	// A rotation that wraps the key for the removed member too is refused.
	e := st.NewEntry(team.KindRotate, st.Admin, at)
	e.Epoch = 3
	e.Keys = map[string][]byte{}
	for _, id := range []*team.Identity{w.admin, w.bob, w.carol} {
		e.Keys[id.Fingerprint()] = must(team.Wrap(ring, id.Public("x", "x").Box))
	}
	if _, err := team.Verify(teamID, w.admin.Fingerprint(), append(w.chain, must(team.Sign(e, w.admin)))); !errors.Is(err, team.ErrForged) {
		t.Fatalf("a key wrapped for a removed member: %v", err)
	}
}

func TestLeaveThenRotate(t *testing.T) {
	w := newWorld(t)
	b, err := team.Leave(w.state(t), w.carol, at)
	w.add(t, b, err)
	if st := w.state(t); !st.Stale || st.Members[w.carol.Fingerprint()] != nil {
		t.Fatal("after a leave the key is stale until the admin rotates")
	}
	b, _, err = team.Rotate(w.state(t), w.admin, w.ring, "", at)
	w.add(t, b, err)
	if st := w.state(t); st.Stale || st.Holders[2][w.carol.Fingerprint()] {
		t.Fatal("the rotation shuts the leaver out")
	}
}

// TestRecordsOfStrangers: no member applies a record of someone the
// chain does not name, one signed by another member than its author, one
// under another member's writer id, or one moved under another index.
func TestRecordsOfStrangers(t *testing.T) {
	w := newWorld(t)
	st := w.state(t)
	mallory := identity(t)
	// Someone the chain does not name, with the team's key even, writes
	// nothing a member applies.
	rec := must(team.SealRecord(team.Header{Team: teamID, Host: "m", Index: 1, Epoch: 1, Author: mallory.Fingerprint()}, w.ring, mallory, []byte("x")))
	if _, _, err := team.OpenRecord(st, w.ring, rec); !errors.Is(err, team.ErrNotMember) {
		t.Fatalf("a stranger's record: %v", err)
	}
	// A member's record claimed by another member: the signature fails.
	rec = must(team.SealRecord(team.Header{Team: teamID, Host: "m", Index: 1, Epoch: 1, Author: w.carol.Fingerprint()}, w.ring, w.bob, []byte("x")))
	if _, _, err := team.OpenRecord(st, w.ring, rec); !errors.Is(err, envelope.ErrTampered) {
		t.Fatalf("a record under another member's name: %v", err)
	}
	// A member's record filed under another member's writer id (the hub
	// refuses the put; its operator files it by hand): set aside, while
	// one under a writer id of before the binding is read as before.
	rec = must(team.SealRecord(team.Header{Team: teamID, Host: team.NewWriter(w.carol.Fingerprint()), Index: 1, Epoch: 1, Author: w.bob.Fingerprint()}, w.ring, w.bob, []byte("x")))
	if _, _, err := team.OpenRecord(st, w.ring, rec); !errors.Is(err, envelope.ErrTampered) {
		t.Fatalf("a record under another member's writer id: %v", err)
	}
	for _, host := range []string{team.NewWriter(w.bob.Fingerprint()), "b0b0b0b0b0b0b0b0"} {
		rec = must(team.SealRecord(team.Header{Team: teamID, Host: host, Index: 1, Epoch: 1, Author: w.bob.Fingerprint()}, w.ring, w.bob, []byte("x")))
		if _, _, err := team.OpenRecord(st, w.ring, rec); err != nil {
			t.Fatalf("bob's record under writer id %s: %v", host, err)
		}
	}
	// A record moved under another index.
	rec = must(team.SealRecord(team.Header{Team: teamID, Host: "b", Index: 1, Epoch: 1, Author: w.bob.Fingerprint()}, w.ring, w.bob, []byte("x")))
	rec.Index = 2
	if _, _, err := team.OpenRecord(st, w.ring, rec); !errors.Is(err, envelope.ErrTampered) {
		t.Fatalf("a record moved: %v", err)
	}
}

func TestInviteCode(t *testing.T) {
	inv := identity(t)
	c := &team.Code{Hub: "http://hub:8080", Team: teamID, Name: "core", Admin: "ab12", Invite: inv.Marshal()}
	got, id, err := team.ParseCode(c.String())
	if err != nil || got.Hub != c.Hub || id.Fingerprint() != inv.Fingerprint() {
		t.Fatalf("%+v %v", got, err)
	}
	s := c.String()
	for _, bad := range []string{"", "loomteam1-", s[:len(s)-5], strings.Replace(s, "loomteam1-", "loomkey1-", 1)} {
		if _, _, err := team.ParseCode(bad); err == nil {
			t.Errorf("%q read as a code", bad)
		}
	}
}

func TestShareSealed(t *testing.T) {
	w := newWorld(t)
	p := team.Project{ID: "9f1c2e0a7b3d4c5e", Name: "secret-project-name", Mode: team.ModeContent}
	b, err := team.Share(w.state(t), w.bob, w.ring, p, at)
	w.add(t, b, err)
	if strings.Contains(string(b), "secret-project-name") {
		t.Fatal("the project's name is in the clear in the chain")
	}
	st := w.state(t)
	got := must(team.OpenProject(w.ring, st.Entries[len(st.Entries)-1]))
	if got != p {
		t.Fatalf("%+v", got)
	}
}
