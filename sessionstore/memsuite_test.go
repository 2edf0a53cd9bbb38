package sessionstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/memstore"
	"github.com/loomhq/loom/internal/testkit/synctest"
)

// memStore is a store in memory on clock now.
func memStore(t *testing.T, now func() time.Time) synctest.Store {
	st := memstore.New()
	st.Now = now
	return st
}

// The sync rule tests (internal/testkit/synctest) over stores in memory: what the
// rules come to across machines, without a database; sqlite's tests run
// the same suite over SQLite files.
func TestMemSyncRules(t *testing.T) {
	synctest.Run(t, memStore)
}

// The table of two machines' concurrent actions (docs/sync.md) and the
// purge's races over stores in memory that sync through a hub in memory
// (memHub), the whole table in a fraction of a second; syncrun's
// TestConcurrent runs it over SQLite stores and a real hub.
func TestMemConcurrent(t *testing.T) {
	synctest.RunConcurrent(t, func(t *testing.T) (synctest.Factory, synctest.Hub) {
		c := newMemHub()
		return memStore, func(ctx context.Context, st synctest.Store) (int, error) {
			m, ok := st.(*memstore.Store)
			if !ok {
				return 0, fmt.Errorf("the hub in memory syncs stores in memory, not %T", st)
			}
			res, err := c.sync(ctx, m)
			return res.Pushed, err
		}
	})
}
