package syncrun

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// parted compares host's log in log with the hub's copy of it, which
// holds onHub records, and returns how many records at their start are
// the same, and whether they part: the hub holds records of the host
// that the store does not (a store restored from a backup), or a record
// at an index the store holds that is not the store's (a store copied
// to another machine that wrote there first, or a record someone else
// put there). Records are compared whole: the hub's is opened with key
// and its payload compared byte for byte with the store's (stamps alone
// do not tell: two copies of a store that write in the same millisecond
// stamp their records alike), or, for a record `loom secrets redact`
// rewrote since, with the payloads it had before (LogRecord.Holds). The
// first differing record is found by bisection, a record read at each
// step.
func parted(ctx context.Context, c *hub.Client, log Log, host synclog.HostID, key envelope.Key, onHub int64) (int64, bool, error) {
	local, err := log.SyncLast(ctx)
	if err != nil {
		return 0, false, err
	}
	hub := max(onHub, 0)
	m := min(hub, local)
	if m == 0 {
		return 0, hub > 0, nil
	}
	same := func(i int64) (bool, error) {
		mine, err := log.SyncLog(ctx, i-1, 1)
		if err != nil {
			return false, err
		}
		if len(mine) == 0 || mine[0].Index != i {
			return false, fmt.Errorf("record %d of this store's sync log is missing", i)
		}
		theirs, _, err := c.Own().Records(ctx, string(host), i-1, 1)
		if err != nil {
			return false, err
		}
		if len(theirs) == 0 || theirs[0].Index != i {
			return false, fmt.Errorf("hub %s: record %d of host %s is missing", c.URL, i, host)
		}
		var h synclog.Header
		if h.UnmarshalBinary(theirs[0].Header) != nil || h.Host != host || h.Index != i || h.HLC != mine[0].HLC {
			return false, nil // not a record this host wrote
		}
		body, err := synclog.OpenEncoded(key, h, theirs[0].Body)
		if err != nil {
			return false, nil // sealed with another key, or altered
		}
		// A record `loom secrets redact` rewrote here is still the
		// record the hub holds in its earlier form.
		return mine[0].Holds(body), nil
	}
	ok, err := same(m)
	if err != nil {
		return 0, false, err
	}
	if ok {
		return m, hub > local, nil
	}
	lo, hi := int64(0), m // record lo is the same (0: none), record hi is not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := same(mid)
		if err != nil {
			return 0, false, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, true, nil
}

// settle finds whether host's log and the hub's part (see parted) and,
// when they do, gives the store a new host (Replica.SyncRehome), so that
// nothing written on either side is lost: the store sends what it wrote
// after the shared records as the new host's, and applies the hub's
// records of the old host as another machine's. It returns the rehome,
// nil when the logs agree.
func settle(ctx context.Context, c *hub.Client, r Replica, host synclog.HostID, key envelope.Key, hosts []loom.SyncHost) (*sessionstore.HostMove, error) {
	var onHub int64
	for _, h := range hosts {
		if h.Host == string(host) {
			onHub = h.Last
		}
	}
	shared, part, err := parted(ctx, c, r, host, key, onHub)
	if err != nil || !part {
		return nil, err
	}
	junk, err := junkAt(ctx, c, host, key, shared+1, onHub)
	if err != nil {
		return nil, err
	}
	rh, err := r.SyncRehome(ctx, host, shared, junk)
	if err != nil {
		return nil, fmt.Errorf("the hub holds records of host %s that this store does not: %w", host, err)
	}
	return &rh, nil
}

// junkAt reports whether host's record i on the hub, which holds onHub
// of its records, is one that no machine with key wrote: its header is
// not one, or it does not open.
func junkAt(ctx context.Context, c *hub.Client, host synclog.HostID, key envelope.Key, i int64, onHub int64) (bool, error) {
	if i > onHub {
		return false, nil
	}
	recs, _, err := c.Own().Records(ctx, string(host), i-1, 1)
	if err != nil || len(recs) == 0 {
		return false, err
	}
	var h synclog.Header
	if h.UnmarshalBinary(recs[0].Header) != nil || h.Host != host || h.Index != i {
		return true, nil
	}
	_, err = synclog.OpenEncoded(key, h, recs[0].Body)
	return err != nil, nil
}
