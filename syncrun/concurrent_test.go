package syncrun_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/internal/testkit/synctest"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/syncrun"
)

// The table of two machines' concurrent actions (docs/sync.md) and the
// purge's races (internal/testkit/synctest) over SQLite stores that sync through
// a real hub with syncrun.Sync; sessionstore's TestMemConcurrent runs
// them in memory.
func TestConcurrent(t *testing.T) {
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	synctest.RunConcurrent(t, func(t *testing.T) (synctest.Factory, synctest.Hub) {
		_, _, c := hubFor(t)
		newStore := func(t *testing.T, now func() time.Time) synctest.Store {
			st := open(t, "sessions.db")
			st.Now = now
			return st
		}
		return newStore, func(ctx context.Context, st synctest.Store) (int, error) {
			r, ok := st.(syncrun.Replica)
			if !ok {
				return 0, fmt.Errorf("syncrun cannot sync a %T", st)
			}
			res, err := syncrun.Sync(ctx, c, r, key)
			return res.Pushed, err
		}
	})
}

var _ syncrun.Replica = (*sqlite.Store)(nil)
