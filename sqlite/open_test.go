package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/loomhq/loom/sqlite"
)

// Handles that open a store that does not exist yet, all at once (the
// first `loom run`s on a machine), all get it: none is refused because
// another is switching the new file to WAL.
func TestOpenNewStoreAtOnce(t *testing.T) {
	const trials, handles = 20, 8
	for trial := range trials {
		db := filepath.Join(t.TempDir(), fmt.Sprint(trial), "sessions.db")
		var wg sync.WaitGroup
		for range handles {
			wg.Go(func() {
				st, err := sqlite.Open(context.Background(), db)
				if err != nil {
					t.Errorf("trial %d: %v", trial, err)
					return
				}
				st.Close()
			})
		}
		wg.Wait()
	}
}
