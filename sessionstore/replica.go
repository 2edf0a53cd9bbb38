package sessionstore

import (
	"context"
	"fmt"

	"github.com/loomhq/loom/synclog"
)

// ReplicaEngine is what a Replica asks of the engine of a store that
// syncs: a write transaction as the apply rules take it. The Replica
// drives the transaction; the engine never calls back.
type ReplicaEngine interface {
	// Begin starts a write transaction.
	Begin(ctx context.Context) (Tx, error)
}

// purgeKeeper is an engine that tells, outside any transaction, whether
// its store keeps what a purge took (PurgeKept.Data) of any session.
type purgeKeeper interface {
	KeepsPurged(ctx context.Context) (bool, error)
}

// Replica is the sync side of a store, written once over a
// ReplicaEngine: setting sync up, applying another host's records and
// taking a new host id. A store that syncs embeds it beside its Store.
type Replica struct {
	eng ReplicaEngine
}

// NewReplica returns the sync side of a store on eng.
func NewReplica(eng ReplicaEngine) *Replica { return &Replica{eng: eng} }

// apply runs fn in one transaction of the engine and ends it with fn's
// outcome.
func (r *Replica) apply(ctx context.Context, fn func(tx Tx) error) error {
	tx, err := r.eng.Begin(ctx)
	if err != nil {
		return err
	}
	return within(tx, fn)
}

// EnableSync sets sync up on the store, once: it gets a host id, its
// sync log starts with the records of what it holds (recordHistory),
// and from then on every change it makes is also a record of the log.
// It returns the host id, the one it had when sync was set up before.
func (r *Replica) EnableSync(ctx context.Context) (synclog.HostID, error) {
	var host synclog.HostID
	err := r.apply(ctx, func(tx Tx) (err error) {
		if host, err = tx.Host(ctx); err != nil || host != "" {
			return err
		}
		host = synclog.NewHostID()
		if err := tx.SetHost(ctx, host); err != nil {
			return fmt.Errorf("set up sync: %w", err)
		}
		if err := recordHistory(ctx, tx, &SyncLog{tx: tx}); err != nil {
			return fmt.Errorf("set up sync: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return host, nil
}

// ApplySync applies record p of another host, whose header is h, to the
// store, in one transaction, by the merge rules of docs/sync.md (applyIn).
// It records nothing in the store's own sync log: applying is not a
// change of this host's. The store keeps the index of the last record
// it applied of each host: a record applied already changes nothing,
// and one that does not follow it is ErrGap. A record stamped too far
// ahead of this machine's clock is synclog.ErrClockAhead.
func (r *Replica) ApplySync(ctx context.Context, h synclog.Header, p synclog.Payload) error {
	return r.apply(ctx, func(tx Tx) error { return applyIn(ctx, tx, h, p) })
}

// SyncPassOver records that the store passed over record idx of host,
// a record set aside because it did not verify or broke the rules (see
// syncrun), so that the host's next records apply: what the store
// applied of host moves to idx when it had applied idx-1, and nothing
// changes otherwise (a record applied or passed over already).
func (r *Replica) SyncPassOver(ctx context.Context, host synclog.HostID, idx int64) error {
	return r.apply(ctx, func(tx Tx) error {
		last, err := tx.Applied(ctx, host)
		if err != nil || last != idx-1 {
			return err
		}
		return tx.SetApplied(ctx, host, idx)
	})
}

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
func (r *Replica) SyncRehome(ctx context.Context, from synclog.HostID, shared int64, junk bool) (HostMove, error) {
	var m HostMove
	err := r.apply(ctx, func(tx Tx) (err error) {
		m, err = Rehome(ctx, tx, from, shared, junk)
		return err
	})
	return m, err
}

// SyncForgetPurged lets go what the store keeps of the sessions its own
// purges took (PurgeKept), for the purges at index upTo of its log and
// before: the sync that sent them to the hub has pulled, so the other
// hosts' work those purges had not seen either came with that pull, or
// comes with the copy its host saves when it applies the purge.
// It returns how many sessions' data it let go. An engine that reads
// outside transactions is asked first whether it keeps any, so that a
// sync after no purge (almost every one) takes no write lock for it.
func (r *Replica) SyncForgetPurged(ctx context.Context, upTo int64) (int, error) {
	if k, ok := r.eng.(purgeKeeper); ok {
		if keeps, err := k.KeepsPurged(ctx); err != nil || !keeps {
			return 0, err
		}
	}
	var n int
	err := r.apply(ctx, func(tx Tx) (err error) {
		n, err = forgetPurged(ctx, tx, upTo)
		return err
	})
	return n, err
}
