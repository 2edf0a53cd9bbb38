package sessionstore

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// change is a metadata record: its stamp and what it changes.
type change struct {
	s synclog.Stamp
	c *synclog.SessionChanged
}

func metaOf(created synclog.Stamp, changes ...change) Meta {
	m := newMeta(row(sessionID), created)
	for _, ch := range changes {
		m.Apply(ch.s, ch.c, 0)
	}
	return m
}

func rowOf(m Meta) *loom.Session {
	s := &loom.Session{}
	m.Row(s, "fix the flaky login test")
	return s
}

// Two hosts change the same session: each field goes to the later
// change, whatever order the records arrive in.
func TestMetaLastWriterWins(t *testing.T) {
	created := stampAt(0, hostA)
	archivedAt := t0.Add(time.Hour)
	rename := func(ms int, h synclog.HostID, title string) change {
		return change{stampAt(ms, h), &synclog.SessionChanged{SessionID: sessionID, Title: &title}}
	}
	archive := func(ms int, h synclog.HostID, at *time.Time) change {
		return change{stampAt(ms, h), &synclog.SessionChanged{SessionID: sessionID, Archive: &synclog.Archive{At: at}}}
	}
	for _, tc := range []struct {
		name    string
		changes []change
		check   func(*loom.Session) bool
	}{
		{"the later rename", []change{rename(10, hostA, "laptop"), rename(20, hostB, "desktop")},
			func(s *loom.Session) bool { return s.Title == "desktop" }},
		{"the same reading: the greater host id", []change{rename(10, hostB, "desktop"), rename(10, hostA, "laptop")},
			func(s *loom.Session) bool { return s.Title == "desktop" }},
		{"archived, then brought back", []change{archive(10, hostA, &archivedAt), archive(20, hostB, nil)},
			func(s *loom.Session) bool { return s.ArchivedAt == nil }},
		{"brought back, then archived", []change{archive(20, hostA, &archivedAt), archive(10, hostB, nil)},
			func(s *loom.Session) bool { return s.ArchivedAt != nil && s.ArchivedAt.Equal(archivedAt) }},
		{"fields merge on their own", []change{
			rename(10, hostA, "laptop"),
			{stampAt(5, hostB), &synclog.SessionChanged{SessionID: sessionID, Model: ptr("gpt-5"), Title: ptr("older")}},
			archive(1, hostC, &archivedAt),
		}, func(s *loom.Session) bool {
			return s.Title == "laptop" && s.Model == "gpt-5" && s.ArchivedAt != nil && s.Provider == "openai"
		}},
		{"a change older than the row changes nothing", []change{rename(-10, hostB, "before")},
			func(s *loom.Session) bool { return s.Title == "fix the flaky login test" }},
		{"a key removed", []change{{stampAt(10, hostB), &synclog.SessionChanged{SessionID: sessionID, Key: ptr("")}}},
			func(s *loom.Session) bool { return s.Key == "" }},
	} {
		for _, order := range [][]change{tc.changes, reversed(tc.changes)} {
			if s := rowOf(metaOf(created, order...)); !tc.check(s) {
				t.Errorf("%s: title %q model %q archived %v key %q", tc.name, s.Title, s.Model, s.ArchivedAt, s.Key)
			}
		}
	}
	m := metaOf(created, rename(20, hostB, "desktop"))
	if m.Apply(stampAt(10, hostA), &synclog.SessionChanged{SessionID: sessionID, Title: ptr("laptop")}, 0) {
		t.Error("an older rename reports a change")
	}
	if !m.Apply(stampAt(30, hostA), &synclog.SessionChanged{SessionID: sessionID, Title: ptr("laptop")}, 0) {
		t.Error("a newer rename reports no change")
	}
}

func reversed[T any](s []T) []T {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// randomChanges returns n metadata records of three hosts with distinct
// stamps, each changing a random few fields, many at the same readings.
func randomChanges(rnd *rand.Rand, n int, session string) []change {
	hosts := []synclog.HostID{hostA, hostB, hostC}
	used := map[synclog.Stamp]bool{}
	var out []change
	for len(out) < n {
		s := synclog.Stamp{HLC: synclog.NewHLC(t0, uint16(rnd.IntN(n))), Host: hosts[rnd.IntN(3)]}
		if used[s] {
			continue
		}
		used[s] = true
		c := &synclog.SessionChanged{SessionID: session}
		v := fmt.Sprintf("v%d", len(out))
		for *c == (synclog.SessionChanged{SessionID: session}) { // until it changes something
			switch rnd.IntN(6) {
			case 0:
				c.Title = ptr("title " + v)
			case 1:
				c.Key = ptr("cli:" + v)
			case 2:
				c.Model = ptr(v)
			case 3:
				c.Project = &loom.Project{ID: v, Name: v, Root: "/src/" + v}
			case 4:
				at := t0.Add(time.Duration(len(out)) * time.Minute)
				c.Archive = &synclog.Archive{At: &at}
				if rnd.IntN(2) == 0 {
					c.Archive.At = nil
				}
			case 5:
				c.GitBranch, c.Cwd = ptr(v), ptr("/src/"+v)
			}
		}
		out = append(out, change{s, c})
	}
	return out
}

// permutations calls f with every order of s.
func permutations[T any](s []T, f func([]T)) {
	var rec func(int)
	rec = func(k int) {
		if k == len(s) {
			f(s)
			return
		}
		for i := k; i < len(s); i++ {
			s[k], s[i] = s[i], s[k]
			rec(k + 1)
			s[k], s[i] = s[i], s[k]
		}
	}
	rec(0)
}

// Any set of metadata records, applied in every order, gives the same
// metadata.
func TestMetaConverges(t *testing.T) {
	created := stampAt(-1, hostA)
	for seed := range uint64(40) {
		rnd := rand.New(rand.NewPCG(seed, 7))
		changes := randomChanges(rnd, 1+int(seed%6), sessionID)
		want := metaOf(created, changes...)
		permutations(changes, func(order []change) {
			if got := metaOf(created, order...); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d: order %v gives %+v, want %+v", seed, order, got, want)
			}
		})
	}
	rnd := rand.New(rand.NewPCG(1, 1))
	changes := randomChanges(rnd, 60, sessionID)
	want := metaOf(created, changes...)
	for range 200 {
		rnd.Shuffle(len(changes), func(i, j int) { changes[i], changes[j] = changes[j], changes[i] })
		if got := metaOf(created, changes...); !reflect.DeepEqual(got, want) {
			t.Fatalf("60 records: %+v, want %+v", got, want)
		}
	}
}

// A conflict fork follows the session it split from (but for its key)
// until its own fields are set, and holds the same fields on every host
// whether it was made before or after the session's changes arrived.
func TestConflictForkMetaConverges(t *testing.T) {
	created := stampAt(-1, hostA)
	for seed := range uint64(300) {
		rnd := rand.New(rand.NewPCG(seed, 8))
		parent := randomChanges(rnd, 1+rnd.IntN(8), sessionID)
		own := randomChanges(rnd, rnd.IntN(4), forkID)
		var want *Meta
		for range 10 {
			// The fork is made when the conflict is found: after a random
			// number of the parent's changes. Its own changes come after
			// it, since they were made on a host that had it.
			all := append(slices.Clone(parent), own...)
			rnd.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
			made := rnd.IntN(len(all) + 1)
			s := newMeta(row(sessionID), created)
			var f *Meta
			var waiting []change
			for i, ch := range all {
				if i == made {
					m := s.Inherit()
					f = &m
					for _, w := range waiting {
						f.Apply(w.s, w.c, 0)
					}
				}
				switch {
				case ch.c.SessionID == sessionID:
					s.Apply(ch.s, ch.c, 0)
					if f != nil {
						f.Apply(ch.s, ch.c, 1)
					}
				case f == nil:
					waiting = append(waiting, ch)
				default:
					f.Apply(ch.s, ch.c, 0)
				}
			}
			if f == nil {
				m := s.Inherit()
				f = &m
				for _, w := range waiting {
					f.Apply(w.s, w.c, 0)
				}
			}
			if want == nil {
				want = f
			} else if !reflect.DeepEqual(*f, *want) {
				t.Fatalf("seed %d: the fork holds %+v, and elsewhere %+v", seed, *f, *want)
			}
		}
	}
}

func TestConflictForkFollowsParent(t *testing.T) {
	created := stampAt(0, hostA)
	s := newMeta(row(sessionID), created)
	s.Apply(stampAt(5, hostA), &synclog.SessionChanged{SessionID: sessionID, Title: ptr("plan")}, 0)
	f := s.Inherit()
	if got := rowOf(f); got.Title != "plan (conflict)" || got.Key != "" || got.Model != "gpt-5-mini" {
		t.Fatalf("new conflict fork: title %q key %q model %q", got.Title, got.Key, got.Model)
	}
	later := &synclog.SessionChanged{SessionID: sessionID, Title: ptr("api"), Key: ptr("cli:api"), Model: ptr("gpt-5")}
	f.Apply(stampAt(10, hostB), later, 1)
	if got := rowOf(f); got.Title != "api (conflict)" || got.Key != "" || got.Model != "gpt-5" {
		t.Fatalf("after the session's change: title %q key %q model %q", got.Title, got.Key, got.Model)
	}
	f.Apply(stampAt(8, hostB), &synclog.SessionChanged{SessionID: forkID, Title: ptr("my way")}, 0)
	f.Apply(stampAt(20, hostA), &synclog.SessionChanged{SessionID: sessionID, Title: ptr("newer")}, 1)
	if got := rowOf(f); got.Title != "my way" {
		t.Fatalf("a fork renamed keeps its title over its parent's later renames: %q", got.Title)
	}
	// A fork of a fork follows the nearer one.
	g := f.Inherit()
	g.Apply(stampAt(30, hostA), &synclog.SessionChanged{SessionID: sessionID, Title: ptr("newest")}, 2)
	if got := rowOf(g); got.Title != "my way (conflict)" {
		t.Fatalf("a conflict fork of a renamed conflict fork: %q", got.Title)
	}
}

func TestTitleOf(t *testing.T) {
	untitled := newMeta(&loom.Session{}, stampAt(0, hostA))
	if got := untitled.TitleOf("fix the flaky login test\nand more"); got != "fix the flaky login test" {
		t.Errorf("an untitled session is titled %q", got)
	}
	if got := untitled.Inherit().TitleOf("fix it"); got != "fix it (conflict)" {
		t.Errorf("an untitled session's conflict fork is titled %q", got)
	}
	if got := conflictTitle("plan (conflict)"); got != "plan (conflict)" {
		t.Errorf("ConflictTitle twice: %q", got)
	}
}

// newMeta and Row carry every field a record may change.
func TestNewMetaRow(t *testing.T) {
	in := row(sessionID)
	in.Title, in.Description, in.ArchivedAt = "plan", "what we plan", ptr(t0)
	out := &loom.Session{}
	newMeta(in, stampAt(0, hostA)).Row(out, "")
	if out.Title != in.Title || out.Description != in.Description || out.Key != in.Key || out.Cwd != in.Cwd ||
		out.Model != in.Model || out.Provider != in.Provider || out.Profile != in.Profile || out.GitBranch != in.GitBranch ||
		out.Project != in.Project || out.ArchivedAt != in.ArchivedAt {
		t.Fatalf("Row gives %+v from %+v", out, in)
	}
}

func TestKeyHolder(t *testing.T) {
	a := KeyClaim{SessionID: sessionID, Stamp: stampAt(10, hostA)}
	b := KeyClaim{SessionID: forkID, Stamp: stampAt(5, hostB)}
	c := KeyClaim{SessionID: childID, Stamp: stampAt(5, hostB)}
	for _, tc := range []struct {
		claims []KeyClaim
		want   KeyClaim
	}{
		{[]KeyClaim{a}, a},
		{[]KeyClaim{a, b}, b},
		{[]KeyClaim{b, a}, b},
		{[]KeyClaim{c, b, a}, b}, // the same stamp: the lower session id
	} {
		if got, ok := keyHolder(tc.claims); !ok || got != tc.want {
			t.Errorf("KeyHolder(%v) = %v", tc.claims, got)
		}
	}
	if _, ok := keyHolder(nil); ok {
		t.Error("KeyHolder of no claims")
	}
}
