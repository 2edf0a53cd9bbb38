package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/internal/testkit/synctest"
	"github.com/loomhq/loom/sqlite"
)

// The sync rule tests (internal/testkit/synctest) over SQLite files, searches
// compared too; sessionstore's tests run the same suite in memory.
func TestSyncRules(t *testing.T) {
	synctest.Run(t, func(t *testing.T, now func() time.Time) synctest.Store {
		st := tempStore(t)
		st.Now = now
		return st
	})
}

// syncPair returns two stores with sync set up, as two machines' stores.
func syncPair(t *testing.T) (a, b *sqlite.Store) {
	t.Helper()
	a, b = tempStore(t), tempStore(t)
	for _, st := range []*sqlite.Store{a, b} {
		if _, err := st.EnableSync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// A change made after a remote record was applied is stamped after it,
// though the record's clock ran ahead and the change is made by another
// process (another handle on the file): a rename made after reading the
// other machine's rename wins on every machine.
func TestApplySyncStampsLaterChangesAfter(t *testing.T) {
	ctx := context.Background()
	a, b := syncPair(t)
	b.Now = func() time.Time { return time.Now().Add(30 * time.Minute) } // b's clock runs ahead
	s := &loom.Session{UserID: "alice", Title: "plan"}
	synctest.Say(t, b, s, loom.RoleUser, "hello")
	synctest.ApplyAll(t, a, synctest.Pull(t, b, 0))
	log := synctest.SyncLog(t, b)
	ahead := log[len(log)-1].HLC

	other := storetest.Must(sqlite.Open(ctx, a.Path()))(t)
	title := "plan, renamed after"
	if _, err := other.UpdateSession(ctx, s.ID, loom.SessionUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	log = synctest.SyncLog(t, other)
	if got := log[len(log)-1].HLC; got <= ahead {
		t.Fatalf("the rename is stamped %s, not after the applied record's %s", got, ahead)
	}
}
