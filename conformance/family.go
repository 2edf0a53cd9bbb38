package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// §1 lineage: Family reads whole trees of forks and sub-agent sessions
// in one call, depth first, siblings oldest first, without the trash or
// other users' sessions.
func testFamily(t *testing.T, open Opener) {
	st := open(t)
	base := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Hour)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	var data []*loom.SessionData
	mk := func(user, kind, parent string, created int) *loom.Session {
		s := &loom.Session{ID: loom.NewID(), UserID: user, Kind: kind, ParentID: parent,
			Title: kind, CreatedAt: at(created), UpdatedAt: at(created)}
		data = append(data, &loom.SessionData{Session: s})
		return s
	}
	// A ─┬─ F1 (fork, t1) ── S3 (sub-agent, t4)
	//    ├─ S1 (sub-agent, t2) ── S2 (sub-agent, t3)
	//    ├─ F2 (fork, t5, in the trash) ── S4 (sub-agent, t6)
	//    └─ X (bob's fork, t7)
	a := mk("alice", loom.KindMain, "", 0)
	f1 := mk("alice", loom.KindFork, a.ID, 1)
	s1 := mk("alice", loom.KindSubagent, a.ID, 2)
	s2 := mk("alice", loom.KindSubagent, s1.ID, 3)
	s3 := mk("alice", loom.KindSubagent, f1.ID, 4)
	f2 := mk("alice", loom.KindFork, a.ID, 5)
	trashed := at(5)
	f2.DeletedAt = &trashed
	mk("alice", loom.KindSubagent, f2.ID, 6)
	x := mk("bob", loom.KindFork, a.ID, 7)
	// Siblings made in the same millisecond come in id order, whatever
	// order they were made in; F1 was made before S1 though its id may
	// sort after S1's.
	b := mk("alice", loom.KindMain, "", 10)
	y1, y2 := mk("alice", loom.KindFork, b.ID, 11), mk("alice", loom.KindFork, b.ID, 11)
	if y2.ID < y1.ID {
		y1, y2 = y2, y1
	}
	// A cycle of parent links, which only a hand-edited or imported
	// database can hold, must not make the query loop.
	c1, c2 := mk("alice", loom.KindFork, "", 20), mk("alice", loom.KindFork, "", 21)
	c1.ParentID, c2.ParentID = c2.ID, c1.ID
	if err := st.Import(ctx(t), data); err != nil {
		t.Fatal(err)
	}

	ids := joinIDs
	name := map[string]string{a.ID: "A", f1.ID: "F1", s1.ID: "S1", s2.ID: "S2", s3.ID: "S3", f2.ID: "F2", x.ID: "X",
		b.ID: "B", y1.ID: "Y1", y2.ID: "Y2", c1.ID: "C1", c2.ID: "C2"}
	names := func(list string) string { return nameIDs(name, list) }
	for _, tc := range []struct {
		what string
		q    loom.FamilyQuery
		want []*loom.Session
	}{
		{"a root's tree", loom.FamilyQuery{IDs: []string{a.ID}, UserID: "alice"}, []*loom.Session{a, f1, s3, s1, s2}},
		{"every user's", loom.FamilyQuery{IDs: []string{a.ID}}, []*loom.Session{a, f1, s3, s1, s2, x}},
		{"sub-agents only", loom.FamilyQuery{IDs: []string{a.ID}, UserID: "alice", SubagentsOnly: true}, []*loom.Session{a, s1, s2}},
		{"a subtree", loom.FamilyQuery{IDs: []string{s1.ID}, UserID: "alice"}, []*loom.Session{s1, s2}},
		{"families in the order asked, each session once", loom.FamilyQuery{IDs: []string{s1.ID, a.ID, b.ID}, UserID: "alice"},
			[]*loom.Session{s1, s2, a, f1, s3, b, y1, y2}},
		{"from the root", loom.FamilyQuery{IDs: []string{s2.ID}, UserID: "alice", FromRoot: true}, []*loom.Session{a, f1, s3, s1, s2}},
		{"from the root through sub-agents only", loom.FamilyQuery{IDs: []string{s3.ID}, UserID: "alice", FromRoot: true, SubagentsOnly: true},
			[]*loom.Session{f1, s3}},
		{"one generation", loom.FamilyQuery{IDs: []string{a.ID}, UserID: "alice", MaxDepth: 1}, []*loom.Session{a, f1, s1}},
		{"limit keeps nearer generations", loom.FamilyQuery{IDs: []string{a.ID}, UserID: "alice", Limit: 4}, []*loom.Session{a, f1, s1, s2}},
		{"a session in the trash", loom.FamilyQuery{IDs: []string{f2.ID}, UserID: "alice"}, nil},
		{"another user's session", loom.FamilyQuery{IDs: []string{x.ID}, UserID: "alice"}, nil},
		{"no such session", loom.FamilyQuery{IDs: []string{loom.NewID()}}, nil},
		{"no ids", loom.FamilyQuery{UserID: "alice"}, nil},
	} {
		got, err := st.Family(ctx(t), tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if g, w := ids(got...), ids(tc.want...); g != w {
			t.Errorf("%s:\n got %s\nwant %s", tc.what, names(g), names(w))
		}
	}
	// A cycle ends: each of its sessions comes once.
	for _, fromRoot := range []bool{false, true} {
		got, err := st.Family(ctx(t), loom.FamilyQuery{IDs: []string{c1.ID}, UserID: "alice", FromRoot: fromRoot})
		if err != nil || len(got) != 2 || got[0].ID == got[1].ID {
			t.Fatalf("family of a cycle (from the root: %v) = %s, %v", fromRoot, names(ids(got...)), err)
		}
	}
	// The sessions come whole, as Session returns them.
	got, err := st.Family(ctx(t), loom.FamilyQuery{IDs: []string{s1.ID}})
	if err != nil || len(got) != 2 {
		t.Fatalf("family = %v, %v", got, err)
	}
	if got[1].ParentID != s1.ID || got[1].Kind != loom.KindSubagent || got[1].UserID != "alice" || !got[1].CreatedAt.Equal(at(3)) {
		t.Fatalf("family member = %+v", got[1])
	}
}

// joinIDs is the ids of ss, in order, separated by spaces.
func joinIDs(ss ...*loom.Session) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return strings.Join(out, " ")
}

// nameIDs is list, ids separated by spaces, with each id that name
// names given as its name.
func nameIDs(name map[string]string, list string) string {
	var out []string
	for _, id := range strings.Fields(list) {
		if n := name[id]; n != "" {
			out = append(out, n)
		} else {
			out = append(out, id)
		}
	}
	return strings.Join(out, " ")
}
