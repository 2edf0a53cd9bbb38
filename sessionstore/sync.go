package sessionstore

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

// SyncTx is an engine's write transaction as PutSync takes it: the steps
// of putting one host's records, in the engine's SQL.
type SyncTx interface {
	// SyncLast returns the index of the last record held of user's
	// host, 0 when there is none, and keeps other transactions from
	// putting records of that host until this one ends.
	SyncLast(ctx context.Context, user, host string) (int64, error)
	// SyncHeld returns user's records of host at the indexes idxs (all
	// of them held), in index order.
	SyncHeld(ctx context.Context, user, host string, idxs []int64) ([]loom.SyncRecord, error)
	// SyncAppend stores recs, the records of host that follow its last
	// one in order, as received at at, and counts them in the host's
	// summary.
	SyncAppend(ctx context.Context, user, host string, recs []loom.SyncRecord, at time.Time) error
}

// PutWrites is an engine's write transaction as a hub's put takes it:
// the steps of SyncTx and its end (as Ender.End).
type PutWrites interface {
	SyncTx
	End(err error) error
}

// PutSync is loom.SyncStore.PutSyncRecords on tx, at now: each host's
// records in index order, whatever the batch's order, checked against
// what is held before any is stored.
func PutSync(ctx context.Context, tx SyncTx, user string, recs []loom.SyncRecord, now time.Time) (int, error) {
	if err := sqlstore.SyncUser(user); err != nil {
		return 0, err
	}
	if err := loom.ValidSyncBatch(recs); err != nil {
		return 0, err
	}
	sorted := slices.Clone(recs)
	slices.SortStableFunc(sorted, func(a, b loom.SyncRecord) int {
		return cmp.Or(strings.Compare(a.Host, b.Host), cmp.Compare(a.Index, b.Index))
	})
	stored := 0
	for len(sorted) > 0 {
		n := 1
		for n < len(sorted) && sorted[n].Host == sorted[0].Host {
			n++
		}
		k, err := putHost(ctx, tx, user, sorted[:n], now)
		if err != nil {
			return 0, err
		}
		stored += k
		sorted = sorted[n:]
	}
	return stored, nil
}

// putHost puts recs, records of one host in index order: those at
// indexes already held must be the records held, and the others must
// follow the host's last record without a gap.
func putHost(ctx context.Context, tx SyncTx, user string, recs []loom.SyncRecord, now time.Time) (int, error) {
	host := recs[0].Host
	last, err := tx.SyncLast(ctx, user, host)
	if err != nil {
		return 0, err
	}
	var idxs []int64
	for _, r := range recs {
		if r.Index <= last && (len(idxs) == 0 || idxs[len(idxs)-1] != r.Index) {
			idxs = append(idxs, r.Index)
		}
	}
	held := map[int64]loom.SyncRecord{}
	if len(idxs) > 0 {
		rows, err := tx.SyncHeld(ctx, user, host, idxs)
		if err != nil {
			return 0, err
		}
		for _, h := range rows {
			held[h.Index] = h
		}
	}
	var fresh []loom.SyncRecord
	for _, r := range recs {
		next := last + int64(len(fresh)) + 1
		switch {
		case r.Index == next:
			fresh = append(fresh, r)
		case r.Index > next:
			return 0, loom.Errorf(loom.EINVALID, "host %s has records up to %d; record %d would leave a gap", host, next-1, r.Index)
		case r.Index > last:
			// A second copy in the batch of a record it adds.
			if !sameSyncRecord(fresh[r.Index-last-1], r) {
				return 0, loom.Errorf(loom.ECONFLICT, "the batch holds two different records %d of host %s", r.Index, host)
			}
		default:
			h, ok := held[r.Index]
			if !ok || !sameSyncRecord(h, r) {
				return 0, loom.Errorf(loom.ECONFLICT, "host %s already has a different record %d", host, r.Index)
			}
		}
	}
	if len(fresh) == 0 {
		return 0, nil
	}
	if err := tx.SyncAppend(ctx, user, host, fresh, now); err != nil {
		return 0, err
	}
	return len(fresh), nil
}

// sameSyncRecord reports whether a and b are one record: the same
// header, which names its host, index, stamp and key (a host never
// writes two records under one), or, without one, the same bytes. Two
// seals of one record differ in their nonce, so a record two processes
// of one machine pushed at once is the same, not a conflict.
func sameSyncRecord(a, b loom.SyncRecord) bool {
	if len(a.Header) > 0 {
		return bytes.Equal(a.Header, b.Header)
	}
	return len(b.Header) == 0 && bytes.Equal(a.Body, b.Body)
}
