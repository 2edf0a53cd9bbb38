package storetest

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// Schema5 is a store written by loom at schema 5, before forks read
// through spans, when a fork copied its parent's rows and a rewind moved
// the later ones to its fork: sessions, forks, forks of forks, a fork
// written to, rewinds, a compaction, a sub-agent, a purged parent, a
// trashed and an archived session (testdata/schema5/generate.go made
// it, with that code). An engine's migration test loads its rows into a
// schema-5 store, migrates it, and checks that it reads the same.
type Schema5 struct {
	// IDs are the sessions' ids.
	IDs []string `json:"ids"`
	// Tables are the rows of sessions, messages and bodies, each an
	// array of objects by column, as the engine's json functions write
	// them (SQLite: as database/sql scanned them).
	Tables map[string]json.RawMessage `json:"tables"`
	// Reads are the SHA-256 of what loom read, by the names of Reads.
	Reads map[string]string `json:"reads"`
}

// schema5 holds the fixtures, so that a test binary built without its
// source paths (-trimpath) finds them.
//
//go:embed testdata/schema5/*.json
var schema5 embed.FS

// LoadSchema5 reads the fixture of engine ("sqlite" or "postgres").
func LoadSchema5(t testing.TB, engine string) *Schema5 {
	t.Helper()
	b, err := schema5.ReadFile("testdata/schema5/" + engine + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var f Schema5
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

// Clock is the time of a store that goes on from the fixture's day: the
// time the fixture was made (its newest session id's), plus the time
// since Clock was called. A store read at the real time would purge
// the fixture's trashed session once loom.TrashTTL had passed since
// the fixture was made, and the fixture's reads would change with the
// calendar.
func (f *Schema5) Clock(t testing.TB) func() time.Time {
	t.Helper()
	var made int64
	for _, id := range f.IDs {
		b, err := hex.DecodeString(strings.ReplaceAll(id, "-", "")[:12])
		if err != nil {
			t.Fatalf("fixture id %q: %v", id, err)
		}
		var ms int64
		for _, c := range b {
			ms = ms<<8 | int64(c)
		}
		made = max(made, ms)
	}
	base, start := time.UnixMilli(made).Add(time.Minute), time.Now()
	return func() time.Time { return base.Add(time.Since(start)).UTC() }
}

// Schema5Migrations returns the SQL of an engine's migrations 1 to 5,
// from its migrations directory (the test's working directory's).
func Schema5Migrations(t testing.TB) []string {
	t.Helper()
	var out []string
	for v := 1; v <= 5; v++ {
		files, _ := filepath.Glob(fmt.Sprintf("migrations/%04d_*.sql", v))
		if len(files) != 1 {
			t.Fatalf("migration %d: %v", v, files)
		}
		body, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(body))
	}
	return out
}

// CheckReads fails t unless st reads the fixture's sessions as loom read
// them at schema 5.
func (f *Schema5) CheckReads(t testing.TB, st loom.Store) {
	t.Helper()
	got, err := Reads(context.Background(), st, "alice", f.IDs)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, name := range slices.Sorted(maps.Keys(f.Reads)) {
		if sum := fmt.Sprintf("%x", sha256.Sum256(got[name])); sum != f.Reads[name] {
			bad++
			t.Errorf("%s reads differently after migrating: %s", name, got[name])
		}
	}
	if len(got) != len(f.Reads) || bad > 0 {
		t.Fatalf("%d of %d reads differ (%d made now)", bad, len(f.Reads), len(got))
	}
}

// Reads is what a store reads of sessions ids of user: each session,
// its messages whole and in windows, its context, searches, usage and
// lineage, by name, as JSON. The schema-5 fixtures hold what loom read
// then (testdata/schema5/generate.go has a copy of it as it was).
func Reads(ctx context.Context, st loom.Store, user string, ids []string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	put := func(name string, v any, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		b, err := json.Marshal(v)
		out[name] = b
		return err
	}
	for _, id := range ids {
		s, err := st.Session(ctx, id)
		if s != nil {
			s.Lock = nil
		}
		if err := put("session "+id, s, err); err != nil {
			return nil, err
		}
		for name, q := range map[string]loom.MessageQuery{
			"all": {}, "newest 3": {Limit: 3}, "2 before 4": {Limit: 2, Before: 4}, "after 2": {After: 2}, "turn 2": {Turn: 2},
		} {
			msgs, err := st.Messages(ctx, id, q)
			if err := put("messages "+name+" "+id, msgs, err); err != nil {
				return nil, err
			}
		}
		msgs, err := st.Context(ctx, id)
		if err := put("context "+id, msgs, err); err != nil {
			return nil, err
		}
		hits, err := st.Search(ctx, loom.SearchQuery{Text: "answer", UserID: user, SessionID: id, Limit: 50})
		if err := put("search in "+id, hits, err); err != nil {
			return nil, err
		}
		u, err := st.Usage(ctx, loom.UsageFilter{UserID: user, SessionID: id})
		if err := put("usage "+id, u, err); err != nil {
			return nil, err
		}
	}
	for _, q := range []string{"zebra1", "question", "read_file", "summary", "written fork", "running"} {
		hits, err := st.Search(ctx, loom.SearchQuery{Text: q, UserID: user, Limit: 100, Archived: true})
		if err := put("search "+q, hits, err); err != nil {
			return nil, err
		}
	}
	u, err := st.Usage(ctx, loom.UsageFilter{UserID: user})
	if err := put("usage", u, err); err != nil {
		return nil, err
	}
	list, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Archived: loom.WithArchived})
	for _, s := range list {
		s.Lock = nil
	}
	if err := put("sessions", list, err); err != nil {
		return nil, err
	}
	fam, err := st.Family(ctx, loom.FamilyQuery{IDs: ids, UserID: user, FromRoot: true})
	if err := put("family", fam, err); err != nil {
		return nil, err
	}
	return out, nil
}

// Schema5GoesOn uses the migrated fixture store st as loom goes on
// using a store after an upgrade, checking each step: repairs and
// writes to old copied forks, forks of them and rewinds of rewound
// forks (which read across old and new layouts), purges of parents
// whose old forks share their bodies. At the end it purges every
// session, so the engine's test can check that nothing is left.
func Schema5GoesOn(t testing.TB, st loom.Store, f *Schema5) {
	t.Helper()
	ctx := context.Background()
	// The fixture's sessions, in the order generate.go made them.
	a, f1, ff, f2, rb := f.IDs[0], f.IDs[2], f.IDs[3], f.IDs[4], f.IDs[6]
	texts := func(id string) []string {
		t.Helper()
		msgs, err := st.Messages(ctx, id, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range msgs {
			if m.SessionID != id {
				t.Fatalf("message %d of %s reads as %s's", m.Seq, id, m.SessionID)
			}
			out = append(out, m.Text())
		}
		return out
	}
	want := map[string][]string{}
	for _, id := range f.IDs {
		want[id] = texts(id)
	}
	check := func() {
		t.Helper()
		for id, w := range want {
			if got := texts(id); !slices.Equal(got, w) {
				t.Fatalf("%s holds %q, want %q", id, got, w)
			}
		}
	}
	// The fork of a fork left a tool running: repaired in place.
	if n, err := st.RepairInterrupted(ctx, ff); err != nil || n != 1 {
		t.Fatalf("repair of a migrated fork = %d, %v", n, err)
	}
	// New forks of old copies, and a rewind of an old rewind's fork.
	g, err := st.Fork(ctx, ff, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want[g.ID] = want[ff]
	h, err := st.Fork(ctx, f1, loom.ForkOptions{Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	want[h.ID] = want[f1][:5]
	r, err := st.Rewind(ctx, rb, loom.RewindOptions{Turn: 3})
	if err != nil {
		t.Fatal(err)
	}
	want[r.ID] = want[rb]
	want[rb] = want[rb][:6]
	check()
	// A write to an old copy, whose body its parent shares, and to the
	// new fork that inherits it.
	for _, id := range []string{f2, h.ID} {
		msgs, err := st.Messages(ctx, id, loom.MessageQuery{Before: 3, Limit: 1})
		if err != nil || len(msgs) != 1 || len(msgs[0].Parts) != 2 {
			t.Fatalf("message 2 of %s = %v, %v", id, msgs, err)
		}
		p := msgs[0].Parts[0]
		p.Text = "rewritten in " + id
		if err := st.UpdatePart(ctx, id, 2, p); err != nil {
			t.Fatal(err)
		}
		want[id] = slices.Clone(want[id])
		want[id][1] = p.Text
	}
	for _, x := range []*loom.Session{g, h, r} {
		if err := st.Append(ctx, x, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "more in " + x.ID}}}); err != nil {
			t.Fatal(err)
		}
		want[x.ID] = append(slices.Clone(want[x.ID]), "more in "+x.ID)
	}
	check()
	// Purging the first session (and its sub-agent) leaves its old and
	// new forks whole; then everything goes.
	if _, err := st.Delete(ctx, a, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	delete(want, a)
	delete(want, f.IDs[1])
	check()
	for _, id := range append(slices.Clone(f.IDs[1:]), g.ID, h.ID, r.ID) {
		if _, err := st.Delete(ctx, id, loom.DeleteOptions{Purge: true, Force: true}); err != nil && loom.ErrorCode(err) != loom.ENOTFOUND {
			t.Fatal(err)
		}
	}
}

// Lineage makes a family whose history lies in several sessions' rows:
// a session of four turns (root), a fork of it at turn 2 that went on
// (fork), a fork of that fork (grand), and a rewind of the root to turn
// 1 whose fork (rewound) holds the four turns. It returns them with what
// each holds, for tests that delete rows by hand and check that the
// others keep their history.
func Lineage(t testing.TB, st loom.Store) (ids map[string]string, holds map[string][]string) {
	t.Helper()
	ctx := context.Background()
	root := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:lineage"}
	say := func(s *loom.Session, words ...string) {
		t.Helper()
		for _, w := range words {
			role := loom.RoleAssistant
			if w[0] == 'q' {
				role = loom.RoleUser
			}
			if err := st.Append(ctx, s, &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: w}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	say(root, "q1 lighthouse", "a1", "q2 lighthouse", "a2", "q3", "a3", "q4", "a4")
	fork, err := st.Fork(ctx, root.ID, loom.ForkOptions{Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	say(fork, "q3 fork", "a3 fork")
	grand, err := st.Fork(ctx, fork.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	say(grand, "q4 grand")
	rewound, err := st.Rewind(ctx, root.ID, loom.RewindOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	say(root, "q2 again")
	all := []string{"q1 lighthouse", "a1", "q2 lighthouse", "a2", "q3", "a3", "q4", "a4"}
	ids = map[string]string{"root": root.ID, "fork": fork.ID, "grand": grand.ID, "rewound": rewound.ID}
	holds = map[string][]string{
		root.ID:    {"q1 lighthouse", "a1", "q2 again"},
		fork.ID:    {"q1 lighthouse", "a1", "q2 lighthouse", "a2", "q3 fork", "a3 fork"},
		grand.ID:   {"q1 lighthouse", "a1", "q2 lighthouse", "a2", "q3 fork", "a3 fork", "q4 grand"},
		rewound.ID: all,
	}
	CheckHolds(t, st, holds)
	return ids, holds
}

// CheckHolds fails t unless each session holds what holds says, and
// search finds each of its messages in it.
func CheckHolds(t testing.TB, st loom.Store, holds map[string][]string) {
	t.Helper()
	ctx := context.Background()
	for id, want := range holds {
		msgs, err := st.Messages(ctx, id, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, m := range msgs {
			got = append(got, m.Text())
			if m.Seq != int64(i+1) {
				t.Fatalf("%s: message %d has seq %d", id, i+1, m.Seq)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s holds %q, want %q", id, got, want)
		}
		hits, err := st.Search(ctx, loom.SearchQuery{Text: "lighthouse", SessionID: id})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, w := range want {
			if strings.Contains(w, "lighthouse") {
				n++
			}
		}
		if len(hits) != n {
			t.Fatalf("search in %s finds %d of its %d lighthouses", id, len(hits), n)
		}
	}
}
