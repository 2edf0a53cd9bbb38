package sqlite

import (
	"context"

	"github.com/loomhq/loom/synclog"
)

// SyncRetired returns the hosts whose logs stop (synclog.Retired), with
// the index after which they do.
func (s *Store) SyncRetired(ctx context.Context) (map[synclog.HostID]int64, error) {
	return hostIndexes(ctx, reads{s}, "read sync state", `SELECT substr(name, 9), CAST(value AS INTEGER) FROM sync_state WHERE name LIKE 'retired %'`)
}
