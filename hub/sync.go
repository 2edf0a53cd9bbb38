package hub

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/synclog"
)

// Log is a host's own sync log as its store keeps it.
type Log interface {
	// SyncHost returns the host's id, "" when sync is not set up.
	SyncHost(ctx context.Context) (synclog.HostID, error)
	// SyncLog returns up to limit of the log's records after index
	// after, in order.
	SyncLog(ctx context.Context, after uint64, limit int) ([]synclog.LogRecord, error)
}

// batch is how many records one push or pull carries at most.
const batch = 500

// Push sends the records of log that the hub does not hold yet, sealed
// with key, in batches, and returns how many it sent. It starts after
// the last record the hub holds of the host, so a push that was cut off
// goes on where the hub stopped, and one run twice sends nothing more.
func (c *Client) Push(ctx context.Context, log Log, key envelope.Key) (int, error) {
	host, err := log.SyncHost(ctx)
	if err != nil {
		return 0, err
	}
	if host == "" {
		return 0, loom.Errorf(loom.EINVALID, "sync is not set up on this store")
	}
	hosts, err := c.Hosts(ctx)
	if err != nil {
		return 0, err
	}
	var last uint64
	for _, h := range hosts {
		if h.Host == string(host) {
			last = uint64(h.Last)
		}
	}
	sent := 0
	for {
		recs, err := log.SyncLog(ctx, last, batch)
		if err != nil || len(recs) == 0 {
			return sent, err
		}
		out := make([]loom.SyncRecord, len(recs))
		for i, r := range recs {
			h := synclog.Header{Host: host, Index: r.Index, HLC: r.HLC, KeyID: key.ID()}
			hb, err := h.MarshalBinary()
			if err != nil {
				return sent, err
			}
			body, err := synclog.SealEncoded(key, h, r.Payload)
			if err != nil {
				return sent, err
			}
			out[i] = loom.SyncRecord{Host: string(host), Index: int64(r.Index), Header: hb, Body: body}
		}
		if _, err := c.Put(ctx, out); err != nil {
			return sent, fmt.Errorf("push records %d to %d: %w", recs[0].Index, recs[len(recs)-1].Index, err)
		}
		sent += len(recs)
		last = recs[len(recs)-1].Index
	}
}

// Pull reads the records of every host but self that the hub holds
// after what applied says was applied of each, opens them with key and
// hands them to apply, each host's in index order. It stops at the
// first error: of the hub, of a record that does not open (a wrong key
// is envelope.ErrWrongKey), or of apply, which says which record it
// could not apply. It returns how many records it handed over.
func (c *Client) Pull(ctx context.Context, self synclog.HostID, applied synclog.Vector, key envelope.Key,
	apply func(synclog.Header, synclog.Payload) error) (int, error) {
	hosts, err := c.Hosts(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, h := range hosts {
		if h.Host == string(self) {
			continue
		}
		after := int64(applied[synclog.HostID(h.Host)])
		for after < h.Last {
			recs, _, err := c.Records(ctx, h.Host, after, batch)
			if err != nil {
				return n, err
			}
			if len(recs) == 0 {
				return n, fmt.Errorf("hub %s: host %s's records after %d are missing", c.URL, h.Host, after)
			}
			for _, r := range recs {
				var hd synclog.Header
				if err := hd.UnmarshalBinary(r.Header); err != nil {
					return n, fmt.Errorf("record %d of host %s: %w", r.Index, r.Host, err)
				}
				if string(hd.Host) != r.Host || int64(hd.Index) != r.Index {
					return n, fmt.Errorf("record %d of host %s: its header says record %d of host %s", r.Index, r.Host, hd.Index, hd.Host)
				}
				p, err := synclog.Open(key, hd, r.Body)
				if err != nil {
					return n, err
				}
				if err := apply(hd, p); err != nil {
					return n, err
				}
				n++
				after = r.Index
			}
		}
	}
	return n, nil
}
