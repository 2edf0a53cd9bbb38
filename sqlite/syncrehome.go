package sqlite

import (
	"context"
	"database/sql"

	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// SyncRehome gives the store a new host id when its log and the hub's
// copy of it part after their first shared records: a store restored
// from a backup (the hub holds records of it that it lost), a store
// copied to another machine (two machines write as one host), or a
// record at the host's index that it did not write. Without it the
// records written here after the parting would never leave the store,
// or those on the hub never come back.
//
// from is the host whose log was compared with the hub's: when the store
// is another host already (another process rehomed it), nothing is done.
// In one transaction: the records after shared are written again as the
// new host's first (the same stamps' HLCs and payloads; a trash's or a
// purge's view of the old host past shared becomes one of the new), the
// stamps of the changes they made move to the new host, and the old
// host counts as another machine of which the store has applied the
// first shared records: the next pull applies the hub's records of it
// after those, as any machine's.
//
// With junk (the hub's record after the shared ones is not one any
// machine with the key wrote), the new host's log gets a Retired record
// of the old host after shared, and the store stops the old host's log
// there itself: every machine stops before the junk instead of failing
// on it at every sync.
func (s *Store) SyncRehome(ctx context.Context, from synclog.HostID, shared int64, junk bool) (sessionstore.HostMove, error) {
	var r sessionstore.HostMove
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = sessionstore.Rehome(ctx, syncTx{writes{s, tx}}, from, shared, junk)
		return err
	})
	return r, err
}

// SyncRetired returns the hosts whose logs stop (synclog.Retired), with
// the index after which they do.
func (s *Store) SyncRetired(ctx context.Context) (map[synclog.HostID]int64, error) {
	return hostIndexes(ctx, reads{s}, "read sync state", `SELECT substr(name, 9), CAST(value AS INTEGER) FROM sync_state WHERE name LIKE 'retired %'`)
}
