package sessionstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/loomhq/loom/internal/memstore"
	"github.com/loomhq/loom/internal/testkit/synctest"
	"github.com/loomhq/loom/synclog"
)

// memHub is a hub in memory for stores in memory: each host's log as its
// store pushed it. It holds the records as the stores log them, unsealed:
// the rules never see a record's seal.
type memHub struct {
	mu   sync.Mutex
	logs map[synclog.HostID][]synclog.LogRecord
}

func newMemHub() *memHub { return &memHub{logs: map[synclog.HostID][]synclog.LogRecord{}} }

// last returns what the hub holds of each host: the index of its last
// record.
func (h *memHub) last() map[synclog.HostID]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[synclog.HostID]int64{}
	for host, log := range h.logs {
		out[host] = int64(len(log))
	}
	return out
}

// push sends st's records after index after, which the hub holds, and
// returns how many it sent and the last index the hub holds then.
func (h *memHub) push(ctx context.Context, st *memstore.Store, host synclog.HostID, after int64) (int, int64, error) {
	recs, err := st.SyncLog(ctx, after, 1<<30)
	if err != nil {
		return 0, after, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range recs {
		if r.Index != int64(len(h.logs[host]))+1 {
			return 0, after, fmt.Errorf("push of record %d of host %s: the hub holds %d", r.Index, host, len(h.logs[host]))
		}
		h.logs[host] = append(h.logs[host], r)
		after = r.Index
	}
	return len(recs), after, nil
}

// record returns record idx of host.
func (h *memHub) record(host synclog.HostID, idx int64) synclog.LogRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs[host][idx-1]
}

// syncResult is what one sync did.
type syncResult struct {
	Pushed int
}

// sync is one sync of st with the hub, round as syncrun.Sync makes it
// (the parts of it for a hub that loses nothing and a store whose log
// stays the hub's): what the hub holds is read once; st's new records
// are pushed; every other host's records after what st applied are
// applied, each host's in index order, a host whose record waits left
// for the others' and come back to while any applies; then what
// applying wrote to st's log (a copy a purge rescues) is pushed.
func (h *memHub) sync(ctx context.Context, st *memstore.Store) (syncResult, error) {
	var res syncResult
	self, err := st.SyncHost(ctx)
	if err != nil || self == "" {
		return res, errors.Join(err, errors.New("sync is not set up"))
	}
	held := h.last()
	n, onHub, err := h.push(ctx, st, self, held[self])
	res.Pushed += n
	if err != nil {
		return res, err
	}
	retired, err := st.SyncRetired(ctx)
	if err != nil {
		return res, err
	}
	applied, err := st.SyncApplied(ctx)
	if err != nil {
		return res, err
	}
	hosts := slices.Sorted(func(yield func(synclog.HostID) bool) {
		for host, last := range held {
			if after, ok := retired[host]; ok && after < last {
				held[host] = after
			}
			if host != self && !yield(host) {
				return
			}
		}
	})
	after := map[synclog.HostID]int64{}
	for _, host := range hosts {
		after[host] = applied[host]
	}
	for {
		waiting, progress := false, false
		for _, host := range hosts {
			for after[host] < held[host] {
				r := h.record(host, after[host]+1)
				p, err := synclog.Decode(r.Payload)
				if err != nil {
					return res, fmt.Errorf("record %d of host %s: %w", r.Index, host, err)
				}
				hd := synclog.Header{Host: host, Index: r.Index, HLC: r.HLC, KeyID: synctest.KeyID}
				err = st.ApplySync(ctx, hd, p)
				if errors.Is(err, synclog.ErrWait) {
					waiting = true
					break
				}
				if err != nil {
					return res, err
				}
				progress = true
				after[host] = r.Index
			}
		}
		if !progress || !waiting {
			break
		}
	}
	n, _, err = h.push(ctx, st, self, onHub)
	res.Pushed += n
	if err != nil {
		return res, err
	}
	// The purges the hub took before the pull have met the work that
	// was there (syncrun.Sync).
	_, err = st.SyncForgetPurged(ctx, onHub)
	return res, err
}
