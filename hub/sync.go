package hub

import (
	"context"
	"errors"
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

// ErrWait is in the chain of an error of Pull's apply that says the
// record follows one not applied yet, of another host: the host's
// records wait, from that one on, while the others' are applied.
var ErrWait = errors.New("record waits for another")

// Wait returns err, a reason why a record cannot be applied yet, as an
// error of Pull's apply that says the record waits (ErrWait).
func Wait(err error) error { return waitError{err} }

type waitError struct{ err error }

func (e waitError) Error() string        { return e.err.Error() }
func (e waitError) Unwrap() error        { return e.err }
func (e waitError) Is(target error) bool { return target == ErrWait }

// Waiting is a host whose records wait: Index is the first that could
// not be applied yet, and Reason why.
type Waiting struct {
	Host   string `json:"host"`
	Index  int64  `json:"index"`
	Reason string `json:"reason"`
}

// PullResult is what a pull did: how many records it applied, and the
// hosts whose records still wait for records of others the hub does not
// hold yet (the next pull applies them once it does).
type PullResult struct {
	Applied int
	Waiting []Waiting
}

// Pull reads the records of every host but self that the hub holds
// after what applied says was applied of each, opens them with key and
// hands them to apply, each host's in index order. A record apply says
// waits (ErrWait) stops its host's records for the moment: Pull goes on
// with the other hosts', and comes back to it while any of them applies,
// so records that follow each other across hosts apply in any order the
// hub serves them. Pull stops at the first other error: of the hub, of
// a record that does not open (a wrong key is envelope.ErrWrongKey), or
// of apply, which says which record it could not apply.
func (c *Client) Pull(ctx context.Context, self synclog.HostID, applied synclog.Vector, key envelope.Key,
	apply func(synclog.Header, synclog.Payload) error) (PullResult, error) {
	var res PullResult
	hosts, err := c.Hosts(ctx)
	if err != nil {
		return res, err
	}
	after := map[string]int64{}
	for _, h := range hosts {
		after[h.Host] = int64(applied[synclog.HostID(h.Host)])
	}
	for {
		res.Waiting = res.Waiting[:0]
		progress := false
		for _, h := range hosts {
			if h.Host == string(self) || after[h.Host] >= h.Last {
				continue
			}
			n, w, err := c.pullHost(ctx, h, after, key, apply)
			res.Applied += n
			if err != nil {
				return res, err
			}
			progress = progress || n > 0
			if w != nil {
				res.Waiting = append(res.Waiting, *w)
			}
		}
		if !progress || len(res.Waiting) == 0 {
			return res, nil
		}
	}
}

// pullHost applies host h's records after after[h.Host] until they end
// or one waits, moving after[h.Host] on with each applied.
func (c *Client) pullHost(ctx context.Context, h loom.SyncHost, after map[string]int64, key envelope.Key,
	apply func(synclog.Header, synclog.Payload) error) (int, *Waiting, error) {
	n := 0
	for after[h.Host] < h.Last {
		recs, _, err := c.Records(ctx, h.Host, after[h.Host], batch)
		if err != nil {
			return n, nil, err
		}
		if len(recs) == 0 {
			return n, nil, fmt.Errorf("hub %s: host %s's records after %d are missing", c.URL, h.Host, after[h.Host])
		}
		for _, r := range recs {
			var hd synclog.Header
			if err := hd.UnmarshalBinary(r.Header); err != nil {
				return n, nil, fmt.Errorf("record %d of host %s: %w", r.Index, r.Host, err)
			}
			if string(hd.Host) != r.Host || int64(hd.Index) != r.Index {
				return n, nil, fmt.Errorf("record %d of host %s: its header says record %d of host %s", r.Index, r.Host, hd.Index, hd.Host)
			}
			p, err := synclog.Open(key, hd, r.Body)
			if err != nil {
				return n, nil, err
			}
			if err := apply(hd, p); errors.Is(err, ErrWait) {
				return n, &Waiting{Host: h.Host, Index: r.Index, Reason: err.Error()}, nil
			} else if err != nil {
				return n, nil, err
			}
			n++
			after[h.Host] = r.Index
		}
	}
	return n, nil, nil
}
