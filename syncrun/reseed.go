package syncrun

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/synclog"
)

// A hub that lost records (restored from an old copy, or emptied) gets
// them back from any machine that holds them: every machine keeps the
// records of the other hosts it pulls, sealed as the hub served them
// (Replica.SyncKeep), and sends the hub those it lacks. So the hub ends
// with the union of what the machines still hold, also of a machine
// that is gone. See docs/sync.md, "A lost hub".

// reseed sends the hub, which holds hosts, the records of other hosts
// than self that r keeps (kept, r's SyncKept) and the hub does not hold, as they were
// served, and returns how many it sent. A host whose last record on the
// hub is not the one r keeps at that index (two logs of one host: a
// store restored from a backup that wrote again under its old host
// before the hub learnt of it) is left alone: its own machine settles
// it.
func reseed(ctx context.Context, c *hub.Client, r Replica, self synclog.HostID, key envelope.Key, hosts []loom.SyncHost, kept synclog.Vector) (int, error) {
	sent := 0
	for _, host := range slices.Sorted(maps.Keys(kept)) {
		last, upto := lastOf(hosts, host), kept[host]
		if host == self || upto <= last {
			continue
		}
		if last > 0 {
			same, err := sameKept(ctx, c, r, host, key, last)
			if err != nil {
				return sent, err
			}
			if !same {
				continue
			}
		}
		for last < upto {
			recs, err := r.SyncKeptRecords(ctx, host, last, batch)
			if err != nil {
				return sent, err
			}
			out := recs[:0]
			var size int64
			for _, rec := range recs {
				if rec.Index != last+int64(len(out))+1 || rec.Index > upto {
					break
				}
				if size += int64(len(rec.Header) + len(rec.Body)); len(out) > 0 && size > loom.MaxSyncBatchBytes {
					break
				}
				out = append(out, rec)
			}
			if len(out) == 0 {
				return sent, fmt.Errorf("record %d of host %s, kept here, is missing", last+1, host)
			}
			if _, err := c.Own().Put(ctx, out); err != nil {
				return sent, fmt.Errorf("send the hub records %d to %d of host %s, which it lost: %w", out[0].Index, out[len(out)-1].Index, host, err)
			}
			sent += len(out)
			last = out[len(out)-1].Index
		}
	}
	return sent, nil
}

// sameKept reports whether the hub's record i of host is the one r
// keeps: the same header, and the same payload once opened.
func sameKept(ctx context.Context, c *hub.Client, r Replica, host synclog.HostID, key envelope.Key, i int64) (bool, error) {
	mine, err := r.SyncKeptRecords(ctx, host, i-1, 1)
	if err != nil || len(mine) == 0 || mine[0].Index != i {
		return false, err
	}
	theirs, _, err := c.Own().Records(ctx, string(host), i-1, 1)
	if err != nil || len(theirs) == 0 || theirs[0].Index != i || !bytes.Equal(theirs[0].Header, mine[0].Header) {
		return false, err
	}
	hd, err := headerOf(string(host), mine[0])
	if err != nil {
		return false, nil
	}
	a, aerr := synclog.OpenEncoded(key, hd, mine[0].Body)
	b, berr := synclog.OpenEncoded(key, hd, theirs[0].Body)
	return aerr == nil && berr == nil && bytes.Equal(a, b), nil
}

// keepBack keeps the records of other hosts that r applied before it
// kept what it pulls (a store that synced with an older loom) or before
// it took them as another machine's (its own records before a rehome),
// reading them from the hub, which holds hosts, while it still does:
// the records up to what applied says r applied of each, from after
// what kept (r's SyncKept) says r keeps. A record that
// does not open with key ends its host's.
func keepBack(ctx context.Context, c *hub.Client, r Replica, self synclog.HostID, key envelope.Key, hosts []loom.SyncHost, applied, kept synclog.Vector) error {
	for _, h := range hosts {
		from, to := kept[synclog.HostID(h.Host)], min(applied[synclog.HostID(h.Host)], h.Last)
		if h.Host == string(self) {
			continue
		}
		for from < to {
			recs, _, err := c.Own().Records(ctx, h.Host, from, batch)
			if err != nil {
				return err
			}
			var good []loom.SyncRecord
			for _, rec := range recs {
				if rec.Index != from+int64(len(good))+1 || rec.Index > to {
					break
				}
				hd, err := headerOf(h.Host, rec)
				if err != nil {
					break
				}
				if _, err := synclog.OpenEncoded(key, hd, rec.Body); err != nil {
					break
				}
				good = append(good, rec)
			}
			if len(good) == 0 {
				break
			}
			if err := r.SyncKeep(ctx, good); err != nil {
				return err
			}
			if from = good[len(good)-1].Index; len(good) < len(recs) && from < to {
				break // a record that does not open
			}
		}
	}
	return nil
}
