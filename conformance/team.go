package conformance

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// A teammate's session carries its team and member as fields of their
// own (Session.Team, Session.Member), written by every path a team's
// store takes them through — a session created by its first message, an
// import, the writes a team's sync applies (loom.ImportApplier), an
// update — and read back by every read: by id, in a listing, in a
// summary, read whole. Its key stays the member's own: two members'
// sessions of one key in one project coexist, while one member's two
// sessions of one key conflict as anyone's do. One's own sessions have
// neither, and their JSON names neither.
func testTeamMember(t *testing.T, open Opener) {
	st := open(t)
	const team = "0123456789abcdef0123456789abcdef"
	now := time.Now().UTC()
	teammate := func(member, key string) *loom.Session {
		s := newSession("me", key)
		s.Team, s.Member = team, member
		s.Surface, s.CreatedAt, s.UpdatedAt = "cli", now, now
		return s
	}
	// msgs are a turn's messages as an import writes them: ids, seqs
	// and times of their own.
	msgs := func() []*loom.Message {
		ms := turnMessages(1)
		for i, m := range ms {
			m.ID, m.Seq, m.CreatedAt = loom.NewID(), int64(i+1), now
			m.Parts[0].ID = loom.NewID()
		}
		return ms
	}
	alice := teammate("alice", "cli:api")
	mustAppend(t, st, alice, turnMessages(1)...)
	bob := teammate("bob", "cli:api")
	if err := st.ApplyImport(ctx(t), &loom.ImportWrite{Sessions: []*loom.SessionData{{Session: bob, Messages: msgs()}}}); err != nil {
		t.Fatalf("a second member's session of the same key: %v", err)
	}
	carol := teammate("carol", "cli:api")
	if err := st.Import(ctx(t), []*loom.SessionData{{Session: carol, Messages: msgs()}}); err != nil {
		t.Fatalf("a third member's session of the same key, imported: %v", err)
	}
	keyless := teammate("alice", "")
	keyless2 := teammate("alice", "")
	if err := st.ApplyImport(ctx(t), &loom.ImportWrite{Sessions: []*loom.SessionData{{Session: keyless, Messages: msgs()}, {Session: keyless2, Messages: msgs()}}}); err != nil {
		t.Fatalf("two keyless sessions of one member: %v", err)
	}
	mine := newSession("me", "cli:api")
	mustAppend(t, st, mine, turnMessages(1)...)

	want := map[string]string{alice.ID: "alice", bob.ID: "bob", carol.ID: "carol", keyless.ID: "alice", keyless2.ID: "alice", mine.ID: ""}
	all := checkMembersRead(t, st, team, want, bob)

	// One member's second live session of a key conflicts.
	again := teammate("alice", "cli:api")
	wantCode(t, st.Append(ctx(t), again, turnMessages(1)...), loom.ECONFLICT)
	againImport := teammate("bob", "cli:api")
	wantCode(t, st.Import(ctx(t), []*loom.SessionData{{Session: againImport, Messages: msgs()}}), loom.ECONFLICT)

	updateMembers(t, st, team, carol, keyless, keyless2)

	// JSON names them for a teammate's session alone.
	b, _ := json.Marshal(all[slices.IndexFunc(all, func(s *loom.Session) bool { return s.ID == bob.ID })])
	if !strings.Contains(string(b), `"team":"`+team+`"`) || !strings.Contains(string(b), `"member":"bob"`) {
		t.Errorf("a teammate's session in JSON: %s", b)
	}
	b, _ = json.Marshal(all[slices.IndexFunc(all, func(s *loom.Session) bool { return s.ID == mine.ID })])
	if strings.Contains(string(b), `"team"`) || strings.Contains(string(b), `"member"`) {
		t.Errorf("one's own session in JSON names a team or member: %s", b)
	}
}

// checkMembersRead: each session in want reads back with its member (and
// the team, where it has one), listed, summarised and read whole alike;
// it returns the sessions listed.
func checkMembersRead(t *testing.T, st loom.Store, team string, want map[string]string, bob *loom.Session) []*loom.Session {
	for id, member := range want {
		got, err := st.Session(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		wantTeam := team
		if member == "" {
			wantTeam = ""
		}
		if got.Member != member || got.Team != wantTeam {
			t.Errorf("session %s reads back team %q member %q, want %q %q", id, got.Team, got.Member, wantTeam, member)
		}
	}
	all, err := st.Sessions(ctx(t), loom.SessionFilter{UserID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := st.Summaries(ctx(t), loom.SessionFilter{UserID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(want) || len(sums) != len(want) {
		t.Fatalf("listed %d sessions and %d summaries, want %d", len(all), len(sums), len(want))
	}
	for i := range all {
		if all[i].Member != want[all[i].ID] || sums[i].Member != want[sums[i].ID] {
			t.Errorf("listed %s with member %q, summary %s with %q", all[i].ID, all[i].Member, sums[i].ID, sums[i].Member)
		}
		if sums[i].Member != "" && sums[i].Team != team {
			t.Errorf("summary %s has team %q", sums[i].ID, sums[i].Team)
		}
	}
	whole, err := st.ReadSessions(ctx(t), []string{bob.ID}, loom.MessageQuery{})
	if err != nil || len(whole) != 1 || whole[0].Session.Member != "bob" || whole[0].Session.Team != team {
		t.Fatalf("read whole: %+v, %v", whole, err)
	}
	return all
}

func updateMembers(t *testing.T, st loom.Store, team string, carol, keyless, keyless2 *loom.Session) {
	// An update sets them, and a change of member that would give one
	// member two sessions of a key conflicts.
	str := func(v string) *string { return &v }
	_, err := st.UpdateSession(ctx(t), carol.ID, loom.SessionUpdate{Member: str("bob")})
	wantCode(t, err, loom.ECONFLICT)
	got, err := st.UpdateSession(ctx(t), carol.ID, loom.SessionUpdate{Member: str("dave"), KeepUpdatedAt: true})
	if err != nil || got.Member != "dave" || got.Team != team || got.Key != "cli:api" {
		t.Fatalf("update of the member = %+v, %v", got, err)
	}
	got, err = st.UpdateSession(ctx(t), keyless.ID, loom.SessionUpdate{Team: str(""), Member: str("")})
	if err != nil || got.Member != "" || got.Team != "" {
		t.Fatalf("update clearing them = %+v, %v", got, err)
	}
	_, err = st.UpdateSession(ctx(t), keyless2.ID, loom.SessionUpdate{Member: str("two\nlines")})
	wantCode(t, err, loom.EINVALID)
}
