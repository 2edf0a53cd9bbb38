package postgres_test

import (
	"testing"

	"github.com/loomhq/loom/internal/testkit/storetest"
)

// A full disk: the store's tables in a tablespace on a small tmpfs,
// filled. PostgreSQL answers disk_full (SQLSTATE 53100), which the store
// says as loom.ENOSPACE.
func TestDiskFull(t *testing.T) {
	_, pool := server(t)
	disk := storetest.SmallDisk(t, "16m", "postgres")
	on := storetest.Tablespace(t, pool, disk)
	st := open(t, on(freshSchema(t)))
	storetest.OutOfSpace(t, st, func() func() { return storetest.Fill(t, disk) })
}
