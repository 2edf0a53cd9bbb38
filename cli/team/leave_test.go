package team_test

import (
	"strings"
	"testing"
)

// TestTeamLeave: bob, whose one machine is in the team, leaves. The hub
// serves its chain to members only, so his loom reads it no more after
// his entry: it says he left (before, it failed with "the hub no longer
// serves you its chain" once he had left), his next sync says he is no
// longer a member, and alice's next sync rotates the key.
func TestTeamLeave(t *testing.T) {
	p := newPair(t)
	alice, bob := p.alice, p.bob
	r := bob.run(t, "team", "leave")
	if r.Code != 0 || !strings.Contains(r.Stdout, "left team core") {
		t.Fatalf("bob's leave: %d\n%s%s", r.Code, r.Stderr, r.Stdout)
	}
	if out := bob.must(t, "team", "sync"); !strings.Contains(out, "no longer a member") {
		t.Fatalf("bob's sync after he left:\n%s", out)
	}
	if out := alice.must(t, "team", "sync"); !strings.Contains(out, "rotated the team's key") {
		t.Fatalf("alice's sync after bob left:\n%s", out)
	}
	if out := alice.must(t, "team", "members"); strings.Contains(out, "bob") {
		t.Fatalf("alice's members after bob left:\n%s", out)
	}
}
