package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/loomhq/loom"
)

// RootsStore is an engine that lists the project roots its sessions
// recorded.
type RootsStore interface {
	Append(ctx context.Context, s *loom.Session, msgs ...*loom.Message) error
	loom.RootLister
}

// RecordedRoots checks st's RecordedRoots: every project root the
// user's sessions recorded, with its project and how many sessions ran
// there; another user's and those of no root are not listed. Each
// engine's TestRecordedRoots runs it on a fresh store.
func RecordedRoots(t *testing.T, st RootsStore) {
	t.Helper()
	ctx := context.Background()
	for i, s := range []*loom.Session{
		{UserID: "u", Project: loom.Project{ID: "p1", Name: "app", Root: "/home/a/app"}},
		{UserID: "u", Project: loom.Project{ID: "p1", Name: "app", Root: "/home/a/app"}},
		{UserID: "u", Project: loom.Project{ID: "p2", Name: "lib", Root: "/srv/lib"}},
		{UserID: "u"},
		{UserID: "other", Project: loom.Project{ID: "p3", Name: "x", Root: "/x"}},
	} {
		s.ID, s.Key = loom.NewID(), "cli:k"+string(rune('a'+i))
		if err := st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.RecordedRoots(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b loom.RecordedRoot) int { return len(b.Root) - len(a.Root) })
	want := []loom.RecordedRoot{{Root: "/home/a/app", ProjectID: "p1", ProjectName: "app", Sessions: 2}, {Root: "/srv/lib", ProjectID: "p2", ProjectName: "lib", Sessions: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("RecordedRoots = %+v, want %+v", got, want)
	}
}
