package team_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// TestTeamDroppedRecordRestored: the hub's operator deletes alice's
// deletion record from team_records, at the end of her writer's log and
// in its middle. Bob's sync names alice for the records missing (never
// "no member") and asks again at every sync; alice's next sync finds
// her record gone from the hub, sends the deletion again and says so in
// one line; bob then ends without the deleted session, and neither says
// anything more at the syncs after.
func TestTeamDroppedRecordRestored(t *testing.T) {
	for _, where := range []string{"end", "middle"} {
		t.Run(where, func(t *testing.T) {
			p := newPair(t)
			alice, bob := p.alice, p.bob
			const gone, kept, later = "0196a3c1-1c4e-7d3f-9a2b-5e6f7a8b9e01", "0196a3c2-1c4e-7d3f-9a2b-5e6f7a8b9e02", "0196a3c3-1c4e-7d3f-9a2b-5e6f7a8b9e03"
			importSession(t, alice, gone, "numbat secret plan", "where is the numbat key", "In the vault.")
			importSession(t, alice, kept, "quokka deploy", "why does the quokka deploy fail", "The cache key.")
			alice.must(t, "team", "share", "--content", "--yes")
			alice.must(t, "team", "sync")
			bob.must(t, "team", "sync")
			if r := bob.run(t, "session", "show", "--team", "core", gone); r.Code != 0 {
				t.Fatalf("bob's copy before the deletion: %d %s", r.Code, r.Stderr)
			}

			alice.must(t, "session", "delete", gone, "--yes")
			if out := alice.must(t, "team", "sync"); !strings.Contains(out, "1 deleted") {
				t.Fatalf("alice's sync of the deletion: %s", out)
			}
			as := alice.teamState(t, p.id)
			deletion := as.Next - 1
			if where == "middle" {
				importSession(t, alice, later, "bilby notes", "bilby", "Bilby done.")
				alice.must(t, "team", "sync")
			}
			tag, err := p.pool.Exec(context.Background(), `DELETE FROM team_records WHERE team_id = $1 AND host_id = $2 AND idx = $3`, p.id, as.Host, deletion)
			if err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("the operator's delete: %v %v", tag, err)
			}
			missing := fmt.Sprintf("writer %s (alice): records %d to %d are missing on the hub", as.Host, deletion, deletion)

			r := bob.run(t, "team", "sync")
			t.Logf("bob's sync with the record dropped:\n%s%s", r.Stderr, r.Stdout)
			if r.Code != 0 || strings.Contains(r.Stderr, "no member") {
				t.Fatalf("bob's sync: %d\n%s", r.Code, r.Stderr)
			}
			if where == "middle" {
				if !strings.Contains(r.Stderr, missing) {
					t.Fatalf("bob's sync does not name alice for the gap:\n%s", r.Stderr)
				}
				// Asked again at the next sync, and said again.
				if r := bob.run(t, "team", "sync"); !strings.Contains(r.Stderr, missing) {
					t.Fatalf("bob's next sync no longer says the gap is open:\n%s", r.Stderr)
				}
			}

			r = alice.run(t, "team", "sync")
			t.Logf("alice's sync:\n%s%s", r.Stderr, r.Stdout)
			if want := fmt.Sprintf("loom: team core: the hub had lost 1 of this machine's records (%d); sent again", deletion); r.Code != 0 || !strings.Contains(r.Stderr, want) {
				t.Fatalf("alice's sync does not send her lost record again (want %q):\n%s", want, r.Stderr)
			}
			if !strings.Contains(r.Stdout, "1 deleted") {
				t.Fatalf("alice's sync does not send the deletion again: %s", r.Stdout)
			}

			r = bob.run(t, "team", "sync")
			t.Logf("bob's sync after alice's:\n%s%s", r.Stderr, r.Stdout)
			if r.Code != 0 || strings.Contains(r.Stderr, "missing") {
				t.Fatalf("bob's sync after alice sent it again: %d\n%s", r.Code, r.Stderr)
			}
			if r := bob.run(t, "session", "show", "--team", "core", gone); r.Code == 0 {
				t.Fatalf("bob still holds the session alice deleted:\n%s", r.Stdout)
			}
			if out := bob.must(t, "session", "list", "--team", "core"); !strings.Contains(out, "quokka deploy") || where == "middle" && !strings.Contains(out, "bilby notes") {
				t.Fatalf("bob's list:\n%s", out)
			}
			for _, m := range []*member{alice, bob} {
				if r := m.run(t, "team", "sync"); r.Code != 0 || strings.Contains(r.Stderr, "missing") || strings.Contains(r.Stderr, "lost") || !strings.Contains(r.Stdout, "sent 0 records") {
					t.Fatalf("%s's sync after: %d\n%s%s", m.name, r.Code, r.Stderr, r.Stdout)
				}
			}
		})
	}
}

// TestTeamDroppedRedactionRestored: the operator deletes the record of
// alice's secrets redact from team_records, the last of her log; her
// next sync sends the session again whole, and bob's copy ends
// redacted.
func TestTeamDroppedRedactionRestored(t *testing.T) {
	p := newPair(t)
	alice, bob := p.alice, p.bob
	const sid = "0196a3c4-1c4e-7d3f-9a2b-5e6f7a8b9e04"
	importSession(t, alice, sid, "dunnart tickets", "look at koala-ticket-93817", "Ticket koala-ticket-93817 is fixed.")
	alice.must(t, "team", "share", "--content", "--yes")
	alice.must(t, "team", "sync")
	bob.must(t, "team", "sync")
	if out := bob.must(t, "session", "show", "--team", "core", sid); !strings.Contains(out, "koala-ticket-93817") {
		t.Fatalf("bob's copy before the redaction:\n%s", out)
	}
	clitest.WriteConfig(t, alice.fx, "[[secrets.rules]]\nid = \"koala-ticket\"\nregex = 'koala-ticket-[0-9]+'\nkeywords = [\"koala-ticket-\"]\n")
	alice.must(t, "secrets", "redact", sid, "--yes")
	before := alice.teamState(t, p.id).Next
	if out := alice.must(t, "team", "sync"); !strings.Contains(out, "1 updated") {
		t.Fatalf("alice's sync of the redaction: %s", out)
	}
	as := alice.teamState(t, p.id)
	tag, err := p.pool.Exec(context.Background(), `DELETE FROM team_records WHERE team_id = $1 AND host_id = $2 AND idx >= $3`, p.id, as.Host, before)
	if err != nil || tag.RowsAffected() < 1 {
		t.Fatalf("the operator's delete: %v %v", tag, err)
	}
	r := alice.run(t, "team", "sync")
	t.Logf("alice's sync:\n%s%s", r.Stderr, r.Stdout)
	if r.Code != 0 || !strings.Contains(r.Stderr, "the hub had lost") || !strings.Contains(r.Stderr, "; sent again") {
		t.Fatalf("alice's sync does not send the redaction again:\n%s", r.Stderr)
	}
	r = bob.run(t, "team", "sync")
	t.Logf("bob's sync:\n%s%s", r.Stderr, r.Stdout)
	if out := bob.must(t, "session", "show", "--team", "core", sid); strings.Contains(out, "koala-ticket-93817") || !strings.Contains(out, "[REDACTED:koala-ticket]") {
		t.Fatalf("bob's copy after alice sent the redaction again:\n%s", out)
	}
}

// TestTeamDroppedReplayedPastEnd: the hub's operator copies alice's last
// record to the index after it. Bob sets the copy aside (its header
// names its old index); alice's next sync writes after it instead of
// stopping at it for good ("it holds another record there"), and bob
// gets her later session.
func TestTeamDroppedReplayedPastEnd(t *testing.T) {
	p := newPair(t)
	alice, bob := p.alice, p.bob
	const first, later = "0196a3c5-1c4e-7d3f-9a2b-5e6f7a8b9e05", "0196a3c6-1c4e-7d3f-9a2b-5e6f7a8b9e06"
	importSession(t, alice, first, "wombat burrow", "where is the wombat", "In its burrow.")
	alice.must(t, "team", "share", "--content", "--yes")
	alice.must(t, "team", "sync")
	bob.must(t, "team", "sync")
	as := alice.teamState(t, p.id)
	tag, err := p.pool.Exec(context.Background(), `INSERT INTO team_records (team_id, host_id, idx, epoch, header, body, received_at)
		SELECT team_id, host_id, idx + 1, epoch, header, body, now() FROM team_records WHERE team_id = $1 AND host_id = $2 AND idx = $3`, p.id, as.Host, as.Next-1)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("the operator's replay: %v %v", tag, err)
	}
	importSession(t, alice, later, "echidna spines", "how many spines", "Thousands.")
	r := alice.run(t, "team", "sync")
	t.Logf("alice's sync:\n%s%s", r.Stderr, r.Stdout)
	if r.Code != 0 || !strings.Contains(r.Stdout, "sent 1 record") {
		t.Fatalf("alice's sync after the replay: %d\n%s%s", r.Code, r.Stderr, r.Stdout)
	}
	if got := alice.teamState(t, p.id).Next; got != as.Next+2 {
		t.Fatalf("alice's next index %d, want %d (after the replayed one)", got, as.Next+2)
	}
	r = bob.run(t, "team", "sync")
	t.Logf("bob's sync:\n%s%s", r.Stderr, r.Stdout)
	if out := bob.must(t, "session", "list", "--team", "core"); !strings.Contains(out, "echidna spines") || !strings.Contains(out, "wombat burrow") {
		t.Fatalf("bob's list after alice wrote past the replay:\n%s", out)
	}
	if r := alice.run(t, "team", "sync"); r.Code != 0 || strings.Contains(r.Stderr, "lost") || !strings.Contains(r.Stdout, "sent 0 records") {
		t.Fatalf("alice's sync after: %d\n%s%s", r.Code, r.Stderr, r.Stdout)
	}
}
