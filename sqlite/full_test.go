package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
)

// A file at SQLite's size limit (max_page_count, a setting of the
// writer's connection) answers a write as a full disk does,
// SQLITE_FULL: loom.ENOSPACE, and nothing half-written.
func TestFileAtItsLimit(t *testing.T) {
	st := storetest.Must(sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sessions.db")))(t)
	storetest.OutOfSpace(t, st, func() func() {
		var pages int
		if err := st.DB().QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DB().Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
			t.Fatal(err)
		}
		return func() {
			if _, err := st.DB().Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A full disk: the store's file on a small tmpfs, filled.
func TestDiskFull(t *testing.T) {
	disk := storetest.SmallDisk(t, "8m", "")
	st := storetest.Must(sqlite.Open(context.Background(), filepath.Join(disk, "sessions.db")))(t)
	storetest.OutOfSpace(t, st, func() func() { return storetest.Fill(t, disk) })
}
