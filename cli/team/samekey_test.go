package team_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/team"
)

// TestTeamSameKeyKeptAlike: a member's two sessions under one key (loom
// never writes them; bob posts them to the hub's API with his own keys,
// each under a fresh writer id of his) are kept alike by teammates that
// applied them in different orders. carol syncs between the two posts
// and applies the session of the larger id first; dave syncs after both
// and reads the other's writer first. Both keep the session of the
// smaller id, with bob's text, and neither holds the other; a sync after
// changes nothing.
func TestTeamSameKeyKeptAlike(t *testing.T) {
	p := newPair(t)
	bob := p.bob
	carol := p.joinCarol(t)
	dave := newMember(t, "dave", p.hubURL, p.tok("dave"))
	p.alice.admit(t, dave)
	const first, second = "0196a3e1-1c4e-7d3f-9a2b-5e6f7a8b9f01", "0196a3e2-1c4e-7d3f-9a2b-5e6f7a8b9f02"
	const key = "cli:api:same"
	me, _ := signer(t, bob, p.id)
	// The second's writer id sorts after the first's: a machine that
	// reads both reads the first's first.
	wFirst, wSecond := team.NewWriter(me.Fingerprint()), team.NewWriter(me.Fingerprint())
	if wSecond < wFirst {
		wFirst, wSecond = wSecond, wFirst
	}
	if _, err := putRecords(p.hubURL, bob.tok, p.id, sessionRecord(t, p, bob, wSecond, second, key, "bandicoot second")); err != nil {
		t.Fatal(err)
	}
	carol.must(t, "team", "sync")
	if out := carol.must(t, "session", "show", "--team", "core", second); !strings.Contains(out, "bandicoot second") {
		t.Fatalf("carol's copy of bob's second session:\n%s", out)
	}
	if _, err := putRecords(p.hubURL, bob.tok, p.id, sessionRecord(t, p, bob, wFirst, first, key, "bandicoot first")); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*member{carol, dave} {
		for range 2 {
			if r := m.run(t, "team", "sync"); r.Code != 0 {
				t.Fatalf("%s's sync: %d %s", m.name, r.Code, r.Stderr)
			} else {
				t.Logf("%s's sync:\n%s%s", m.name, r.Stderr, r.Stdout)
			}
		}
		if r := m.run(t, "session", "show", "--team", "core", first); r.Code != 0 || !strings.Contains(r.Stdout, "bandicoot first") {
			t.Fatalf("%s does not keep bob's session of the smaller id: %d %s%s", m.name, r.Code, r.Stdout, r.Stderr)
		}
		if r := m.run(t, "session", "show", "--team", "core", second); r.Code == 0 {
			t.Fatalf("%s keeps both of bob's sessions under one key:\n%s", m.name, r.Stdout)
		}
	}
}
