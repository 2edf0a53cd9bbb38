package syncrun

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/synclog"
)

// The sync service: what `loom sync` runs (once, --watch, status, and
// the check of loom sync key); the command line only reads the settings
// and prints.

// Store is a store that syncs (SQLite stores), which its first sync
// sets up.
type Store interface {
	Replica
	// EnableSync sets sync up on the store, once: a host id, and what
	// it holds as the first records of its log.
	EnableSync(ctx context.Context) (synclog.HostID, error)
}

// Once sets sync up on st the first time, then syncs it (Sync).
func Once(ctx context.Context, c *hub.Client, st Store, key envelope.Key) (Result, error) {
	if _, err := st.EnableSync(ctx); err != nil {
		return Result{Waiting: []Waiting{}}, err
	}
	return Sync(ctx, c, st, key)
}

// Watch sets sync up on st the first time, then syncs it every interval
// until ctx ends, handing each cycle's result or error to report; an
// error of report ends it. A failing cycle (a hub away for a while) is
// no reason to stop: the next one runs at its time.
func Watch(ctx context.Context, c *hub.Client, st Store, key envelope.Key, interval time.Duration, report func(Result, error) error) error {
	if _, err := st.EnableSync(ctx); err != nil {
		return err
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		res, err := Sync(ctx, c, st, key)
		if ctx.Err() != nil {
			return nil
		}
		if err := report(res, err); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// HostStatus is what the hub holds of one of the user's hosts, beside
// what this machine holds of it.
type HostStatus struct {
	Host    string `json:"host"`
	This    bool   `json:"this_machine"`
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`
	// Behind is how many of the host's records are not where they
	// should be yet: this machine's not on the hub, another's not
	// applied here.
	Behind int64 `json:"behind"`
	// HubLacks is how many of another host's records this machine
	// keeps that the hub does not hold (a hub restored from an old
	// copy, or emptied): the next loom sync sends them.
	HubLacks int64 `json:"hub_lacks"`
}

// Status returns every host of the user's with what is behind: the
// hub's hosts, and this machine's before it has sent a record. host is
// "" when sync is not set up on r.
func Status(ctx context.Context, c *hub.Client, r Replica) (host synclog.HostID, hosts []HostStatus, err error) {
	if host, err = r.SyncHost(ctx); err != nil {
		return "", nil, err
	}
	held, err := c.Own().Hosts(ctx)
	if err != nil {
		return "", nil, err
	}
	applied, err := r.SyncApplied(ctx)
	if err != nil {
		return "", nil, err
	}
	local, err := r.SyncLast(ctx)
	if err != nil {
		return "", nil, err
	}
	kept, err := r.SyncKept(ctx)
	if err != nil {
		return "", nil, err
	}
	seen := false
	for _, h := range held {
		x := HostStatus{Host: h.Host, Records: h.Records, Bytes: h.Bytes}
		if h.Host == string(host) {
			x.This, seen = true, true
			x.Behind = int64(local) - h.Last
		} else {
			x.Behind = max(0, h.Last-int64(applied[synclog.HostID(h.Host)]))
			x.HubLacks = max(0, kept[synclog.HostID(h.Host)]-h.Last)
		}
		delete(kept, synclog.HostID(h.Host))
		hosts = append(hosts, x)
	}
	if host != "" && !seen {
		hosts = append(hosts, HostStatus{Host: string(host), This: true, Behind: int64(local)})
	}
	// The hosts whose records this machine keeps and the hub has none of.
	for _, h := range slices.Sorted(maps.Keys(kept)) {
		if h != host && kept[h] > 0 {
			hosts = append(hosts, HostStatus{Host: string(h), HubLacks: kept[h]})
		}
	}
	return host, hosts, nil
}

// CheckNewKey refuses a new sync key on a machine when the hub holds the
// user's records sealed with one: the machine could not sync with
// another, and needs that one. A hub that does not answer within 10 s
// refuses nothing: the key is the machine's to make.
func CheckNewKey(ctx context.Context, c *hub.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if state, err := c.State(ctx); err == nil && state.KeyID != "" {
		return loom.Errorf(loom.EINVALID, "the hub holds your records sealed with sync key %s: this machine needs that key, not a new one; run loom sync key on a machine that has it and give what it prints to loom sync key --set here", state.KeyID)
	}
	return nil
}
