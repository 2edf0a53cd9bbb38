package blame

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/fake"
)

// editsOf is an edit index holding edits, whatever the query.
func editsOf(edits ...loom.FileEdit) *fake.EditStore {
	return &fake.EditStore{EditsFn: func(context.Context, loom.EditQuery) ([]loom.FileEdit, error) { return edits, nil }}
}

// Sources read as one index: an edit two stores hold (one's own session
// as the team has it) is the later store's, naming its member, and
// the session is said to come from there; one's own edits name Me; all
// are oldest first. A bare read keeps every store's edits.
func TestSourcesEditsPreferTheLaterStore(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	shared := loom.FileEdit{SessionID: "mine", PartID: "p1", Op: "write", Path: "/src/a.go", At: t0.Add(time.Minute)}
	asTeam := shared
	asTeam.SessionID, asTeam.Member = "mine-in-team", "ann"
	ownOnly := loom.FileEdit{SessionID: "mine", PartID: "p2", Op: "edit", Path: "/src/a.go", At: t0.Add(2 * time.Minute)}
	teamOnly := loom.FileEdit{SessionID: "bob's", PartID: "p3", Op: "edit", Path: "/src/a.go", At: t0, Member: "bob"}
	u := &Sources{Me: "ann", List: []Source{
		{Store: editsOf(shared, ownOnly)},
		{Team: "core", Store: editsOf(asTeam, teamOnly)},
	}}

	got, err := u.Edits(t.Context(), loom.EditQuery{Under: "/src"})
	if err != nil {
		t.Fatal(err)
	}
	var who []string
	for _, e := range got {
		who = append(who, e.SessionID+" "+e.Member)
	}
	if want := []string{"bob's bob", "mine-in-team ann", "mine ann"}; !reflect.DeepEqual(who, want) {
		t.Errorf("edits read as one: %q, want %q", who, want)
	}
	for id, want := range map[string]int{"mine-in-team": 1, "bob's": 1, "mine": 0, "carol's": -1} {
		if got := u.Holds(id); got != want {
			t.Errorf("Holds(%q) = %d, want %d", id, got, want)
		}
	}
	if bare, err := u.Edits(t.Context(), loom.EditQuery{Under: "/src", Bare: true}); err != nil || len(bare) != 4 {
		t.Errorf("a bare read: %d edits, %v; want every store's 4", len(bare), err)
	}
}

// The roots of several stores: project roots each once, recorded roots
// each once with their sessions summed, and a store with no roots to
// list left out.
func TestSourcesRootsOfEveryStore(t *testing.T) {
	rootsOf := func(roots ...string) *fake.EditStore {
		return &fake.EditStore{ProjectRootsFn: func(context.Context, string, string) ([]string, error) { return roots, nil }}
	}
	recorded := func(rs ...loom.RecordedRoot) *fake.RootLister {
		return &fake.RootLister{RecordedRootsFn: func(context.Context, string) ([]loom.RecordedRoot, error) { return rs, nil }}
	}
	u := &Sources{List: []Source{
		{Store: rootsOf("/src/api"), Roots: recorded(loom.RecordedRoot{Root: "/src/api", Sessions: 2})},
		{Team: "core", Store: rootsOf("/src/api", "/home/bob/api"), Roots: recorded(loom.RecordedRoot{Root: "/src/api", Sessions: 1}, loom.RecordedRoot{Root: "/home/bob/api", Sessions: 3})},
		{Team: "web", Store: rootsOf()},
	}}
	roots, err := u.ProjectRoots(t.Context(), "local", "p1")
	if want := []string{"/src/api", "/home/bob/api"}; err != nil || !reflect.DeepEqual(roots, want) {
		t.Errorf("project roots: %q, %v; want %q", roots, err, want)
	}
	rec, err := u.RecordedRoots(t.Context(), "local")
	if want := []loom.RecordedRoot{{Root: "/src/api", Sessions: 3}, {Root: "/home/bob/api", Sessions: 3}}; err != nil || !reflect.DeepEqual(rec, want) {
		t.Errorf("recorded roots: %+v, %v; want %+v", rec, err, want)
	}
}
