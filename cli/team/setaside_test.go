package team_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/team"
	"github.com/loomhq/loom/teamrun"
)

// pair is a team of two on a hub of one process: alice its admin, bob
// a member.
type pair struct {
	id, admin  string
	hubURL     string
	hubHome    string // the hub's LOOM_HOME, and its store's URL:
	hubDB      string // another hub process starts with both
	pool       *pgxpool.Pool
	alice, bob *member
	tok        func(user string) string
}

func newPair(t *testing.T) *pair {
	t.Helper()
	hubDB := clitest.FreshSchema(t)
	h, hubHome, _ := clitest.StartHub(t, hubDB)
	p := &pair{hubURL: h.Base, hubHome: hubHome, hubDB: hubDB}
	p.tok = func(u string) string { return hubToken(t, hubHome, hubDB, u) }
	p.alice = newMember(t, "alice", h.Base, p.tok("alice"))
	p.bob = newMember(t, "bob", h.Base, p.tok("bob"))
	var created struct{ ID, Admin string }
	json.Unmarshal([]byte(p.alice.must(t, "team", "create", "core", "--json")), &created)
	p.id, p.admin = created.ID, created.Admin
	p.alice.admit(t, p.bob)
	pool, err := pgxpool.New(context.Background(), hubDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	p.pool = pool
	return p
}

// signer is a member's own keys, read from their data directory: what a
// member who posts straight to the hub's API signs with.
func signer(t *testing.T, m *member, id string) (*team.Identity, *teamrun.State) {
	t.Helper()
	l := teamrun.Local{Dir: filepath.Join(m.fx.Home, "data", "teams")}
	me, _, err := l.Identity()
	if err != nil {
		t.Fatal(err)
	}
	return me, m.teamState(t, id)
}

// keylessSession imports a loom export of a session without a key.
func keylessSession(t *testing.T, m *member, id, text string) {
	t.Helper()
	at := "2026-03-01T10:00:00.000Z"
	importLines(t, m, id, m.fx.Project, []any{
		map[string]any{"type": "session", "session": map[string]any{"id": id, "title": text, "user_id": m.name, "surface": "cli", "kind": "main",
			"project": map[string]any{"id": "0000000000000000", "name": "api", "root": "/elsewhere/api"}, "created_at": at, "updated_at": at}},
		map[string]any{"type": "message", "message": map[string]any{"id": id[:30] + "000001", "session_id": id, "seq": 1, "role": "user", "created_at": at,
			"parts": []any{map[string]any{"id": "p1", "type": "text", "text": text}}}},
	})
}

// TestTeamSyncSetsAside: no record stops a team. Two keyless sessions,
// a teammate's records that reuse one key, a record from someone the
// hub's operator put in its members table and 2,000 junk writers (the
// hub refuses her pushes, so the operator files them in its records
// table by hand): each member's sync applies the rest, sets those aside
// with whose and why, exits 0, says it in a bounded number of lines, and
// says it once; loom team doctor lists them.
func TestTeamSyncSetsAside(t *testing.T) {
	p := newPair(t)
	alice, bob := p.alice, p.bob
	keylessSession(t, alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9d01", "keyless wallaby one")
	keylessSession(t, alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9d02", "keyless wallaby two")
	importSession(t, alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9d03", "wombat deploy", "why does the wombat deploy fail", "The cache key.")
	alice.must(t, "team", "share", "--content", "--yes")
	alice.must(t, "team", "sync")

	// Bob, with his own keys, signs two sessions of one key straight to
	// the hub: the second cannot be kept beside the first.
	me, bs := signer(t, bob, p.id)
	epoch, _ := bs.Keys.Latest()
	twinHost := team.NewWriter(me.Fingerprint())
	var recs []team.Record
	for i, sid := range []string{"0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9d11", "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9d12"} {
		sess := &loom.Session{ID: sid, Key: "cli:same", Surface: "cli", Kind: "main", Title: "bob's twin " + sid[len(sid)-2:], Project: loom.Project{ID: "0000000000000000", Name: "api"},
			CreatedAt: clitest.Base, UpdatedAt: clitest.Base}
		msg := &loom.Message{ID: sid[:30] + "000001", SessionID: sid, Seq: 1, Role: "user", CreatedAt: clitest.Base, Parts: []loom.Part{{ID: "p1", Type: "text", Text: "twin"}}}
		b, _ := json.Marshal(teamrun.Outgoing(team.ModeContent, sess, []*loom.Message{msg}))
		tag, _ := team.SessionTag(bs.Keys, p.id, sid)
		rec, err := team.SealRecord(team.Header{Team: p.id, Host: twinHost, Index: int64(i + 1), Epoch: epoch, Author: me.Fingerprint(), ChainSeq: bs.Seq, ChainHead: bs.Head, Session: tag}, bs.Keys, me, b)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if _, err := putRecords(p.hubURL, bob.tok, p.id, recs...); err != nil {
		t.Fatal(err)
	}

	// Mallory, let in by a row of the hub's members table, writes a
	// record signed with keys of her own that names a chain head far past
	// the team's (which is not read again at every sync), and 2,000 junk
	// writers' records. The hub refuses her push (no member of the chain
	// signed it); its operator files them all by hand.
	mallory := newMember(t, "mallory", p.hubURL, p.tok("mallory"))
	if _, err := p.pool.Exec(context.Background(), `INSERT INTO team_members (team_id, member, user_id) VALUES ($1, 'ffff', 'mallory')`, p.id); err != nil {
		t.Fatal(err)
	}
	mid, _ := team.NewIdentity()
	far, err := team.SealRecord(team.Header{Team: p.id, Host: team.NewWriter(mid.Fingerprint()), Index: 1, Epoch: epoch, Author: mid.Fingerprint(), ChainSeq: 999999, ChainHead: "x"}, bs.Keys, mid, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	junk := team.Record{Host: "ffffffffffffffff", Index: 1, Epoch: epoch, Header: []byte(`{"junk":true}`), Body: make([]byte, 80)}
	for _, r := range []team.Record{far, junk} {
		if _, err := putRecords(p.hubURL, mallory.tok, p.id, r); loom.ErrorCode(err) != "forbidden" {
			t.Fatalf("mallory, let in by the row, pushes %s: %v", r.Host, err)
		}
	}
	if _, err := p.pool.Exec(context.Background(), `INSERT INTO team_records (team_id, host_id, idx, epoch, header, body, received_at) VALUES ($1, $2, $3, $4, $5, $6, now())`,
		p.id, far.Host, far.Index, far.Epoch, far.Header, far.Body); err != nil {
		t.Fatal(err)
	}
	if _, err := p.pool.Exec(context.Background(), `INSERT INTO team_records (team_id, host_id, idx, epoch, header, body, received_at)
		SELECT $1, lpad(to_hex(n), 16, '0'), 1, $2, $3, $4, now() FROM generate_series(0, 1999) AS n`,
		p.id, junk.Epoch, junk.Header, junk.Body); err != nil {
		t.Fatal(err)
	}

	for _, m := range []*member{bob, alice} {
		r := m.run(t, "team", "sync")
		if r.Code != 0 {
			t.Fatalf("%s's sync with records set aside: exit %d\n%s%s", m.name, r.Code, r.Stdout, r.Stderr[:min(len(r.Stderr), 2000)])
		}
		if len(r.Stderr) > 4000 || strings.Count(r.Stderr, "\n") > 30 {
			t.Fatalf("%s's sync said %d bytes, %d lines of what it set aside", m.name, len(r.Stderr), strings.Count(r.Stderr, "\n"))
		}
		t.Logf("%s's sync:\n%s%s", m.name, r.Stderr, r.Stdout)
		if !strings.Contains(r.Stderr, "set aside") || !strings.Contains(r.Stderr, "loom team doctor") || !strings.Contains(r.Stderr, "record 2 (bob)") {
			t.Fatalf("%s's sync does not say what it set aside:\n%s", m.name, r.Stderr)
		}
		list := m.must(t, "session", "list", "--team", "core", "--all-projects")
		for _, w := range []string{"keyless wallaby one", "keyless wallaby two", "wombat deploy", "bob's twin 11"} {
			if !strings.Contains(list, w) {
				t.Fatalf("%s's team store lacks %q:\n%s", m.name, w, list)
			}
		}
		if r := m.run(t, "team", "sync", "--json"); r.Code != 0 || strings.Contains(r.Stderr, "set aside") || strings.Contains(r.Stdout, "kept_apart") || strings.Contains(r.Stdout, "newer") {
			t.Fatalf("%s's next sync: %d %s", m.name, r.Code, r.Stderr)
		}
		var doc struct {
			SetAside []struct {
				Host   string `json:"host"`
				Index  int64  `json:"index"`
				Author string `json:"author"`
				Why    string `json:"why"`
			} `json:"set_aside"`
			SetAsideTotal int `json:"set_aside_total"`
		}
		if err := json.Unmarshal([]byte(m.must(t, "team", "doctor", "--json")), &doc); err != nil {
			t.Fatal(err)
		}
		twin := false
		for _, s := range doc.SetAside {
			twin = twin || s.Host == twinHost && s.Index == 2 && s.Author == "bob" && s.Why != ""
		}
		if doc.SetAsideTotal != 2002 || !twin {
			t.Fatalf("%s's doctor: %d set aside, bob's second twin among them %v", m.name, doc.SetAsideTotal, twin)
		}
		out := m.must(t, "team", "doctor")
		t.Logf("%s's doctor:\n%s", m.name, out[:min(len(out), 1200)])
		if !strings.Contains(out, twinHost) || len(out) > 8000 {
			t.Fatalf("%s's doctor:\n%s", m.name, out)
		}
	}
}
