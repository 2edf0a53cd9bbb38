package sessionstore_test

import (
	"testing"
	"time"

	"github.com/loomhq/loom/internal/memstore"
	"github.com/loomhq/loom/internal/synctest"
)

// The sync rule tests (internal/synctest) over stores in memory: what the
// rules come to across machines, without a database; sqlite's tests run
// the same suite over SQLite files.
func TestMemSyncRules(t *testing.T) {
	synctest.Run(t, func(t *testing.T, now func() time.Time) synctest.Store {
		st := memstore.New()
		st.Now = now
		return st
	})
}
