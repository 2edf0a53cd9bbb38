package team_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/team"
	"github.com/loomhq/loom/teamrun"
)

// postRecords posts recs straight to the hub's API with token tok and
// returns the answer's status and body.
func postRecords(t *testing.T, hubBase, tok, teamID string, recs ...team.Record) (int, string) {
	t.Helper()
	var push hub.Push
	for _, r := range recs {
		push.Records = append(push.Records, hub.RecordOf(r.Sync()))
	}
	body, _ := json.Marshal(push)
	req, _ := http.NewRequest(http.MethodPost, hubBase+hub.TeamPath(teamID)+"/records", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTeamBudgets plays a member who posts records straight to the
// hub's API with his own keys, each of a session of his own: past the
// team's budget of records the hub answers 429, past its budget of
// bytes 413, each with a JSON error naming the budget and how to raise
// it; the admin raising it (loom team budget, a signed entry) lets the
// same records through. bob's own sync past the budget exits 1 with one
// line that says so, and passes once alice raises it again; so does his
// unshare past the budget of chain entries.
func TestTeamBudgets(t *testing.T) {
	p := newPair(t)
	alice, bob := p.alice, p.bob
	out := alice.must(t, "team", "budget")
	if !strings.Contains(out, "100,000 records (1 GiB)") || !strings.Contains(out, "1,000 chain entries (4 MiB)") {
		t.Fatalf("the default budgets:\n%s", out)
	}
	if r := bob.run(t, "team", "budget", "--records", "5"); r.Code == 0 || !strings.Contains(r.Stderr, "only the team's admin") {
		t.Fatalf("bob sets the budget: %d %s", r.Code, r.Stderr)
	}
	out = alice.must(t, "team", "budget", "--records", "3", "--record-bytes", "64KiB")
	if !strings.Contains(out, "3 records (64 KiB)") {
		t.Fatalf("alice sets the budget:\n%s", out)
	}

	me, bs := signer(t, bob, p.id)
	epoch, _ := bs.Keys.Latest()
	writer := team.NewWriter(me.Fingerprint())
	seal := func(i int64, size int) team.Record {
		t.Helper()
		sid := fmt.Sprintf("0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9d%02d", i)
		tag, err := team.SessionTag(bs.Keys, p.id, sid)
		if err != nil {
			t.Fatal(err)
		}
		pl, _ := json.Marshal(teamrun.Outgoing(team.ModeContent, &loom.Session{ID: sid, Key: "cli:api:" + sid[:8], Surface: "cli", Kind: "main",
			Title: "bob's " + strings.Repeat("wombat ", size/7), Project: loom.Project{ID: "0000000000000000", Name: "api"}}, nil))
		rec, err := team.SealRecord(team.Header{Team: p.id, Host: writer, Index: i, Epoch: epoch, Author: me.Fingerprint(),
			ChainSeq: bs.Seq, ChainHead: bs.Head, Session: tag}, bs.Keys, me, pl)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	small := []team.Record{seal(1, 100), seal(2, 100), seal(3, 100), seal(4, 100)}
	if status, body := postRecords(t, p.hubURL, bob.tok, p.id, small[:3]...); status != http.StatusOK {
		t.Fatalf("bob's 3 records within the budget: %d %s", status, body)
	}
	status, body := postRecords(t, p.hubURL, bob.tok, p.id, small[3])
	var refusal struct {
		Error struct{ Code, Message string }
	}
	if json.Unmarshal([]byte(body), &refusal); status != http.StatusTooManyRequests || !strings.Contains(refusal.Error.Message, "budget of records: bob has 4 records on the hub, and a member has at most 3") ||
		!strings.Contains(refusal.Error.Message, "loom team budget --records N") {
		t.Fatalf("bob's 4th record past a budget of 3: %d %s", status, body)
	}
	// Sent again, the records the hub holds are not counted twice.
	if status, body := postRecords(t, p.hubURL, bob.tok, p.id, small[:3]...); status != http.StatusOK {
		t.Fatalf("bob's 3 records sent again: %d %s", status, body)
	}
	alice.must(t, "team", "budget", "--records", "10")
	if status, body := postRecords(t, p.hubURL, bob.tok, p.id, small[3]); status != http.StatusOK {
		t.Fatalf("bob's 4th record once alice raised the budget: %d %s", status, body)
	}
	big := seal(5, 70<<10)
	status, body = postRecords(t, p.hubURL, bob.tok, p.id, big)
	if json.Unmarshal([]byte(body), &refusal); status != http.StatusRequestEntityTooLarge || !strings.Contains(refusal.Error.Message, "budget of record bytes") ||
		!strings.Contains(refusal.Error.Message, "--record-bytes N") {
		t.Fatalf("bob's record past a budget of 64 KiB: %d %s", status, body)
	}
	alice.must(t, "team", "budget", "--record-bytes", "1MiB")
	if status, body := postRecords(t, p.hubURL, bob.tok, p.id, big); status != http.StatusOK {
		t.Fatalf("bob's large record once alice raised the budget: %d %s", status, body)
	}

	// bob's own loom, past the budget of records: one line.
	alice.must(t, "team", "budget", "--records", "5")
	importSession(t, bob, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9e01", "bob's numbat", "numbat", "Numbat done.")
	bob.must(t, "team", "share", "--content", "--yes")
	r := bob.run(t, "team", "sync")
	if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); r.Code == 0 || !strings.Contains(r.Stderr, "over the team's budget of records") ||
		!strings.Contains(r.Stderr, "loom team budget --records N") || len(lines) != 1 {
		t.Fatalf("bob's sync past the budget: exit %d\n%s%s", r.Code, r.Stderr, r.Stdout)
	}
	t.Logf("bob's sync past the budget: %s", r.Stderr)
	alice.must(t, "team", "budget", "--records", "0")
	bob.must(t, "team", "sync")
	alice.must(t, "team", "sync")
	if out := alice.must(t, "session", "list", "--team", "core", "--all-projects"); !strings.Contains(out, "bob's numbat") {
		t.Fatalf("alice's team store, once the budget is raised:\n%s", out)
	}

	// Chain entries: bob signed one (his share); past a budget of one,
	// his next is refused (429), and passes once alice raises it.
	alice.must(t, "team", "budget", "--entries", "1")
	r = bob.run(t, "team", "unshare")
	if r.Code == 0 || !strings.Contains(r.Stderr, "over the team's budget of entries: bob has signed 1 of its chain's entries, and a member signs at most 1") ||
		!strings.Contains(r.Stderr, "loom team budget --entries N") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("bob's unshare past the budget of entries: exit %d\n%s", r.Code, r.Stderr)
	}
	alice.must(t, "team", "budget", "--entries", "2")
	bob.must(t, "team", "unshare")
}
