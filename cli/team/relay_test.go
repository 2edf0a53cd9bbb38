package team_test

import (
	"context"
	"strings"
	"testing"
)

// TestTeamDepartedRecordsSentOn: bob writes two sessions and alice (the
// admin) reads them, then removes him. The hub's operator alters a byte
// of bob's first record and deletes his second: bob can send nothing
// again. carol, who reads bob's log only now, sets the altered record
// aside and is told, at each sync, that it is missing; alice's next sync
// finds the hub's copy of what she kept of bob's records (at the
// removal) differs and sends both on, byte for byte; carol's next sync
// applies them, and holds bob's sessions as alice does.
func TestTeamDepartedRecordsSentOn(t *testing.T) {
	p := newPair(t)
	alice, bob := p.alice, p.bob
	carol := p.joinCarol(t)
	const first, second = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c21", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c22"
	importSession(t, bob, first, "bob's quokka", "why is the quokka cache cold", "The quokka cache was cold.")
	importSession(t, bob, second, "bob's bilby", "bilby retries", "Bilby retries fixed.")
	bob.must(t, "team", "share", "--content", "--yes")
	bob.must(t, "team", "sync")
	alice.must(t, "team", "sync")
	host := bob.teamState(t, p.id).Host
	alice.must(t, "team", "remove", "bob")
	ctx := context.Background()
	var last int64
	if err := p.pool.QueryRow(ctx, `SELECT max(idx) FROM team_records WHERE team_id = $1 AND host_id = $2`, p.id, host).Scan(&last); err != nil || last < 2 {
		t.Fatalf("bob's records on the hub: %d %v", last, err)
	}
	if tag, err := p.pool.Exec(ctx, `UPDATE team_records SET body = set_byte(body, 80, get_byte(body, 80) # 1) WHERE team_id = $1 AND host_id = $2 AND idx = 1`, p.id, host); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("the operator's edit: %v %v", tag, err)
	}
	if tag, err := p.pool.Exec(ctx, `DELETE FROM team_records WHERE team_id = $1 AND host_id = $2 AND idx = $3`, p.id, host, last); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("the operator's delete: %v %v", tag, err)
	}
	holds := func(m *member) string {
		t.Helper()
		return m.must(t, "session", "list", "--team", "core", "--all-projects")
	}
	r := carol.run(t, "team", "sync")
	t.Logf("carol's sync:\n%s%s", r.Stderr, r.Stdout)
	if r.Code != 0 || !strings.Contains(r.Stderr, "altered or damaged") || !strings.Contains(r.Stderr, "(bob, who left the team): records 1 to 1 are missing on the hub") {
		t.Fatalf("carol's sync does not say bob's record is altered and asked for again:\n%s", r.Stderr)
	}
	if out := holds(carol); strings.Contains(out, "quokka") {
		t.Fatalf("carol holds the session of bob's altered record:\n%s", out)
	}
	r = alice.run(t, "team", "sync")
	t.Logf("alice's sync:\n%s%s", r.Stderr, r.Stdout)
	if r.Code != 0 || !strings.Contains(r.Stderr, "the hub had lost or altered 2 records of writers who left the team, kept by this machine; sent on") {
		t.Fatalf("alice's sync does not send bob's records on:\n%s", r.Stderr)
	}
	r = carol.run(t, "team", "sync")
	t.Logf("carol's sync after:\n%s%s", r.Stderr, r.Stdout)
	if r.Code != 0 || strings.Contains(r.Stderr, "missing on the hub") {
		t.Fatalf("carol's sync after alice sent bob's records on:\n%s", r.Stderr)
	}
	for _, m := range []*member{alice, carol} {
		if out := holds(m); !strings.Contains(out, "quokka") || !strings.Contains(out, "bilby") {
			t.Fatalf("%s does not hold bob's sessions:\n%s", m.name, out)
		}
	}
	if r := alice.run(t, "team", "sync"); r.Code != 0 || strings.Contains(r.Stderr, "sent on") {
		t.Fatalf("alice's sync once the hub holds bob's records again:\n%s", r.Stderr)
	}
}

// TestTeamAppliedRecordsSentOn: bob writes a session and carol reads
// it. The hub's operator alters a byte of bob's record before bob's
// machine syncs again (its audit would send it again), and alice (the
// admin), who reads it only now, sets it aside as a gap; then she
// removes bob, keeping nothing of it (the hub holds it altered). carol's
// next sync sends on the copy she applied, byte for byte; alice's next
// sync applies it, holds bob's session as carol does, and no longer
// says it is missing.
func TestTeamAppliedRecordsSentOn(t *testing.T) {
	p := newPair(t)
	alice, bob := p.alice, p.bob
	carol := p.joinCarol(t)
	const id = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c31"
	importSession(t, bob, id, "bob's numbat", "why is the numbat queue slow", "The numbat queue was slow.")
	bob.must(t, "team", "share", "--content", "--yes")
	bob.must(t, "team", "sync")
	carol.must(t, "team", "sync")
	host := bob.teamState(t, p.id).Host
	ctx := context.Background()
	if tag, err := p.pool.Exec(ctx, `UPDATE team_records SET body = set_byte(body, 80, get_byte(body, 80) # 1) WHERE team_id = $1 AND host_id = $2 AND idx = 1`, p.id, host); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("the operator's edit: %v %v", tag, err)
	}
	holds := func(m *member) string {
		t.Helper()
		return m.must(t, "session", "list", "--team", "core", "--all-projects")
	}
	r := alice.run(t, "team", "sync")
	t.Logf("alice's sync:\n%s%s", r.Stderr, r.Stdout)
	if r.Code != 0 || !strings.Contains(r.Stderr, "altered or damaged") || !strings.Contains(r.Stderr, "missing on the hub") {
		t.Fatalf("alice's sync does not say bob's record is altered and asked for again:\n%s", r.Stderr)
	}
	if out := holds(alice); strings.Contains(out, "numbat") {
		t.Fatalf("alice holds the session of bob's altered record:\n%s", out)
	}
	alice.must(t, "team", "remove", "bob")
	r = carol.run(t, "team", "sync")
	t.Logf("carol's sync:\n%s%s", r.Stderr, r.Stdout)
	if r.Code != 0 || !strings.Contains(r.Stderr, "sent on") {
		t.Fatalf("carol's sync does not send bob's record on:\n%s", r.Stderr)
	}
	r = alice.run(t, "team", "sync")
	t.Logf("alice's sync after:\n%s%s", r.Stderr, r.Stdout)
	if r.Code != 0 || strings.Contains(r.Stderr, "missing on the hub") {
		t.Fatalf("alice's sync after carol sent bob's record on:\n%s", r.Stderr)
	}
	for _, m := range []*member{alice, carol} {
		if out := holds(m); !strings.Contains(out, "numbat") {
			t.Fatalf("%s does not hold bob's session:\n%s", m.name, out)
		}
	}
	if r := carol.run(t, "team", "sync"); r.Code != 0 || strings.Contains(r.Stderr, "sent on") {
		t.Fatalf("carol's sync once the hub holds bob's record again:\n%s", r.Stderr)
	}
}
