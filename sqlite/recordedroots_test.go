package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
)

// TestRecordedRoots: every project root the user's sessions recorded,
// with its project and how many sessions ran there; another user's
// and those of no root are not listed.
func TestRecordedRoots(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.RecordedRoots(t, st)
}
