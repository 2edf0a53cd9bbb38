package teamrun

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/team"
)

// TestApplySetsTeamAndMember: a teammate's session is kept under the
// member's own key with the team and the member as fields, the member
// being the record's author as the verified chain names them, whatever
// the record says of team, member or key; two members' sessions of one
// key are two sessions, and so are one member's keyless ones. A record
// of an older loom, whose key packs its author's name, is kept under
// the key without it; a name packed by someone else stays in the key,
// and says nothing of whose the session is.
func TestApplySetsTeamAndMember(t *testing.T) {
	ctx := context.Background()
	_, v, st, _ := publishClient(t)
	ts := openTeamStore(t, &st)
	v.Past["bob-fp"] = &team.Member{Name: "bob"}
	alice, bob := &team.Header{Author: v.Me.Fingerprint()}, &team.Header{Author: "bob-fp"}
	sid := ids(7)
	applyAs := func(hd *team.Header, sd *loom.SessionData) {
		t.Helper()
		b, _ := json.Marshal(Outgoing(team.ModeContent, sd.Session, sd.Messages))
		if _, err := apply(ctx, st, v, hd, b); err != nil {
			t.Fatal(err)
		}
	}
	keyed := func(i int, key string) *loom.SessionData {
		sd := sessionData(sid[i], 2)
		sd.Session.Key = key
		return sd
	}
	claims := keyed(0, "cli:app")
	claims.Session.Team, claims.Session.Member = "another-team", "mallory"
	applyAs(alice, claims)
	applyAs(bob, keyed(1, "cli:app"))
	applyAs(alice, keyed(2, ""))
	applyAs(alice, keyed(3, ""))
	applyAs(alice, keyed(4, "cli:@alice/legacy"))
	applyAs(bob, keyed(5, "cli:@alice/x"))
	applyAs(alice, keyed(6, "cli:@alice/"))
	for i, want := range []struct{ key, member string }{
		{"cli:app", "alice"}, {"cli:app", "bob"}, {"", "alice"}, {"", "alice"},
		{"cli:legacy", "alice"}, {"cli:@alice/x", "bob"}, {"", "alice"},
	} {
		got, err := ts.Session(ctx, sid[i])
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		if got.Key != want.key || got.Member != want.member || got.Team != v.Local.ID {
			t.Errorf("session %d: key %q, team %q, member %q; want %q, %q, %q", i, got.Key, got.Team, got.Member, want.key, v.Local.ID, want.member)
		}
	}
	// What goes out names neither: each machine takes them from the
	// chain.
	mine := keyed(0, "cli:app")
	mine.Session.Team, mine.Session.Member = "t", "alice"
	if pl := Outgoing(team.ModeAggregates, mine.Session, mine.Messages); pl.Session.Team != "" || pl.Session.Member != "" || pl.Session.Key != "cli:app" {
		t.Fatalf("outgoing: key %q, team %q, member %q", pl.Session.Key, pl.Session.Team, pl.Session.Member)
	}
}

// TestMigrateKeys: a team's store written by a loom that packed the
// author into the key ("cli:@alice/app") is moved to keys of their own
// with the team and member as fields, once: two members' sessions of
// one key become two sessions of that key, a packed key that named no
// key of its own (or the session's id, as a keyless session's did)
// becomes none, and a session already moved is left as it is.
func TestMigrateKeys(t *testing.T) {
	ctx := context.Background()
	ts, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	sid := ids(6)
	old := []string{"cli:@alice/app", "cli:@bob/app", "claude-code:@bob/abc", "cli:@ana/", "cli:@ana/" + sid[4], "cli:mine"}
	var data []*loom.SessionData
	for i, k := range old {
		sd := sessionData(sid[i], 2)
		sd.Session.Key, sd.Session.Surface = k, loom.SurfaceOf(k)
		data = append(data, sd)
	}
	data[5].Session.Team, data[5].Session.Member = "tid", "carol"
	if err := ts.Import(ctx, data); err != nil {
		t.Fatal(err)
	}
	n, err := MigrateKeys(ctx, ts, "alice", "tid")
	if err != nil || n != 5 {
		t.Fatalf("migrate: %d, %v; want 5", n, err)
	}
	for i, want := range []struct{ key, member string }{
		{"cli:app", "alice"}, {"cli:app", "bob"}, {"claude-code:abc", "bob"}, {"", "ana"}, {"", "ana"}, {"cli:mine", "carol"},
	} {
		got, err := ts.Session(ctx, sid[i])
		if err != nil {
			t.Fatal(err)
		}
		if got.Key != want.key || got.Member != want.member || got.Team != "tid" || !got.UpdatedAt.Equal(data[i].Session.UpdatedAt) {
			t.Errorf("%s: key %q, team %q, member %q, updated %s; want %q, tid, %q, %s", old[i], got.Key, got.Team, got.Member, got.UpdatedAt, want.key, want.member, data[i].Session.UpdatedAt)
		}
	}
	if got, _ := ts.Session(ctx, sid[2]); got.Surface != "claude-code" {
		t.Errorf("surface %q", got.Surface)
	}
	if n, err := MigrateKeys(ctx, ts, "alice", "tid"); err != nil || n != 0 {
		t.Fatalf("a second migration: %d, %v", n, err)
	}
}
