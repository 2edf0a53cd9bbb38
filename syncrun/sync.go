// Package syncrun is the sync run: what one loom sync does between a
// store and a hub, over the hub's client (hub.Client, the wire protocol).
// Sync compares the store's log with the hub's copy and gives the store
// a new host id when they part (parted.go), pushes the store's own
// records sealed, sends back the records of other hosts that the hub
// lost (reseed.go), and pulls and applies the other hosts' records
// opened. Around it is the service that loom sync calls (service.go):
// Once and Watch, which set sync up on a store the first time, Status,
// and CheckNewKey for loom sync key. In every function c is the hub,
// and the store is a Replica (SQLite stores) that applies what a record
// means (package sessionstore's rules). See docs/sync.md.
package syncrun

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
	"github.com/loomhq/loom/syncpath"
)

// Log is a host's own sync log as its store keeps it.
type Log interface {
	// SyncHost returns the host's id, "" when sync is not set up.
	SyncHost(ctx context.Context) (synclog.HostID, error)
	// SyncLog returns up to limit of the log's records after index
	// after, in order.
	SyncLog(ctx context.Context, after int64, limit int) ([]synclog.LogRecord, error)
	// SyncLast returns the index of the log's last record, 0 when none.
	SyncLast(ctx context.Context) (int64, error)
}

// batch is how many records one push or pull carries at most; a push
// also closes a batch at loom.MaxSyncBatchBytes of headers and bodies.
const batch = 500

// Replica is a store that syncs: its own log, and the records of other
// hosts it applies.
type Replica interface {
	Log
	// SyncApplied returns the index of the last record applied of each
	// other host.
	SyncApplied(ctx context.Context) (synclog.Vector, error)
	// ApplySync applies a record of another host. A record that cannot
	// apply yet returns an error in whose chain is synclog.ErrWait.
	ApplySync(ctx context.Context, h synclog.Header, p synclog.Payload) error
	// SyncRehome gives the store a new host id when its log, that of
	// host from, and the hub's copy part after their first shared
	// records (see sessionstore.Rehome); when the store is no longer host
	// from, it does nothing and says which host it is.
	// With junk, the hub's record after the shared ones is one no
	// machine with the key wrote: the store also writes that the old
	// host's log stops there (synclog.Retired).
	SyncRehome(ctx context.Context, from synclog.HostID, shared int64, junk bool) (sessionstore.HostMove, error)
	// SyncPassOver records that the store passed over record index of
	// host, one set aside (it did not verify, or broke the rules), so
	// that the host's next records apply; it does nothing unless the
	// store applied the record before it.
	SyncPassOver(ctx context.Context, host synclog.HostID, index int64) error
	// SyncRetired returns the hosts whose logs stop, and after which
	// index (synclog.Retired).
	SyncRetired(ctx context.Context) (map[synclog.HostID]int64, error)
	// SyncKeep keeps records of other hosts as the hub served them,
	// sealed, so that the store can send them again to a hub that lost
	// them; a record kept already is left as it is.
	SyncKeep(ctx context.Context, recs []loom.SyncRecord) error
	// SyncKept returns, for each other host of which the store keeps
	// records, the index up to which it keeps every one from the first.
	SyncKept(ctx context.Context) (synclog.Vector, error)
	// SyncKeptRecords returns up to limit of the records kept of host
	// after index after, in order.
	SyncKeptRecords(ctx context.Context, host synclog.HostID, after int64, limit int) ([]loom.SyncRecord, error)
	// SyncConflicts returns the conflict forks the store holds (see
	// docs/sync.md, "Concurrent appends"), with whose message each
	// starts with.
	SyncConflicts(ctx context.Context) ([]sessionstore.Conflict, error)
	// SyncForgetPurged lets go what the store keeps of the sessions its
	// own purges up to index upTo of its log took (see
	// sessionstore.PurgeKept): a pull has run since the hub took them.
	SyncForgetPurged(ctx context.Context, upTo int64) (int, error)
	// ScrubIfPending removes from the store's files the text that a
	// change replaced by redaction markers, once a change marked it to
	// (applying a record of another machine's loom secrets redact
	// marks it), and reports whether it did.
	ScrubIfPending(ctx context.Context) (bool, error)
}

// Result is what one Sync did: records sent, records applied, and the
// hosts whose records wait (see PullResult).
type Result struct {
	Host   synclog.HostID `json:"host"`
	Pushed int            `json:"pushed"`
	// Reseeded is how many records of other hosts, which this store
	// keeps and the hub had lost, the sync sent again (see reseed).
	Reseeded int       `json:"reseeded"`
	Pulled   int       `json:"pulled"`
	Waiting  []Waiting `json:"waiting"`
	// Rehomed is set when the store's log and the hub's parted (a store
	// restored from a backup, or copied) and the store took a new host
	// id to keep both sides (see sessionstore.HostMove).
	Rehomed *sessionstore.HostMove `json:"rehomed,omitempty"`
	// User is the user the hub's token is of: the owner of the
	// sessions the records carry.
	User string `json:"user,omitempty"`
	// Conflicts are the conflict forks this sync made of this
	// machine's own turns: another machine's, at the same place in the
	// same session, kept the session.
	Conflicts []sessionstore.Conflict `json:"conflicts,omitempty"`
	// Scrubbed is set when records applied replaced text by redaction
	// markers (another machine's loom secrets redact) and the sync
	// then scrubbed the store's files of the text replaced (Replica.ScrubIfPending).
	Scrubbed bool `json:"scrubbed,omitempty"`
	// SetAside are the other machines' records this sync passed over
	// instead of applying (they did not verify or open with the key,
	// or broke the rules), and why: each is passed over once and the
	// host's next records applied, as a team's sync does.
	SetAside []syncpath.SetAside `json:"set_aside,omitempty"`
}

// Sync pushes r's new records, sealed with key, and the records of
// other hosts that r keeps and the hub lost; then it pulls and applies
// the other hosts' records (Push, then Pull), keeping each as the hub
// served it, and pushes what applying them wrote to r's log (the copy
// a purge rescues). It asks the hub once what it holds.
func Sync(ctx context.Context, c *hub.Client, r Replica, key envelope.Key) (Result, error) {
	res := Result{Waiting: []Waiting{}}
	host, err := ownHost(ctx, r)
	if err != nil {
		return res, err
	}
	res.Host = host
	state, err := c.State(ctx)
	if err != nil {
		return res, err
	}
	hosts := state.Hosts
	if state.KeyID != "" && state.KeyID != key.ID() {
		// Before anything is sent: records sealed with another key
		// would stop every other machine's sync.
		return res, wrongKey(state.KeyID, key.ID())
	}
	res.User = state.User
	if res.Rehomed, err = settle(ctx, c, r, host, key, hosts); err != nil {
		return res, err
	}
	if res.Rehomed != nil {
		host = res.Rehomed.New
		res.Host = host
	}
	var onHub int64
	if res.Pushed, onHub, err = push(ctx, c, r, host, key, lastOf(hosts, host)); err != nil {
		return res, err
	}
	// What r keeps of the other hosts, read once for sending the hub
	// what it lacks and for keeping back what r applied.
	kept, err := r.SyncKept(ctx)
	if err != nil {
		return res, err
	}
	if res.Reseeded, err = reseed(ctx, c, r, host, key, hosts, kept); err != nil {
		return res, err
	}
	applied, err := r.SyncApplied(ctx)
	if err != nil {
		return res, err
	}
	if err := keepBack(ctx, c, r, host, key, hosts, applied, kept); err != nil {
		return res, err
	}
	retired, err := r.SyncRetired(ctx)
	if err != nil {
		return res, err
	}
	before, err := r.SyncConflicts(ctx)
	if err != nil {
		return res, err
	}
	pr, err := pull(ctx, c, host, applied, key, stopRetired(hosts, retired),
		func(h synclog.Header, p synclog.Payload) error { return r.ApplySync(ctx, h, p) }, r.SyncKeep,
		func(host string, index int64) error { return r.SyncPassOver(ctx, synclog.HostID(host), index) })
	res.SetAside = pr.SetAside
	var rerr recordError
	if errors.As(err, &rerr) {
		// The records pulled may have said that the log the error
		// stopped in ends before it.
		if now, rerrr := r.SyncRetired(ctx); rerrr == nil {
			if after, ok := now[synclog.HostID(rerr.host)]; ok && after < rerr.index {
				err = nil
			}
		}
	}
	res.Pulled = pr.Applied
	if len(pr.Waiting) > 0 {
		res.Waiting = pr.Waiting
	}
	if pr.Applied > 0 {
		res.Conflicts, err = newConflicts(ctx, r, host, before, err)
	}
	// A pull that left records waiting may not yet hold the work a
	// purge had not seen: what the purge kept stays for the next sync.
	pulled := err == nil && len(pr.Waiting) == 0
	err = finishSync(ctx, c, r, host, key, onHub, pulled, &res, err)
	return res, err
}

// finishSync is what a sync does after its pull, unless ctx is done:
// it pushes what applying the records wrote to r's log, lets go what
// the purges took once the pull was whole (pulled), and scrubs the
// store's files of text the records replaced. It returns err, the
// pull's, joined with its own.
func finishSync(ctx context.Context, c *hub.Client, r Replica, host synclog.HostID, key envelope.Key, onHub int64, pulled bool, res *Result, err error) error {
	if ctx.Err() == nil {
		// Applying a purge may have written a rescued copy to this
		// store's log: it leaves now, not at the next sync, which may
		// never come.
		n, _, perr := push(ctx, c, r, host, key, onHub)
		res.Pushed += n
		if err == nil {
			err = perr
		}
	}
	if pulled && ctx.Err() == nil {
		// The purges the hub took before the pull have met the work
		// that was there: what they took need not be kept any more.
		if _, ferr := r.SyncForgetPurged(ctx, onHub); err == nil {
			err = ferr
		}
	}
	if ctx.Err() == nil {
		// Records applied that replaced text by redaction markers
		// (another machine's loom secrets redact) leave the text
		// replaced readable in the store's files until they are
		// scrubbed; an ordinary sync reads one row here.
		done, serr := r.ScrubIfPending(ctx)
		res.Scrubbed = done && serr == nil
		if serr != nil {
			serr = fmt.Errorf("the records applied replaced secrets by redaction markers, and scrubbing the store's files of the text replaced failed: %w", serr)
			if err == nil {
				err = serr
			} else {
				err = fmt.Errorf("%w; and %w", err, serr)
			}
		}
	}
	return err
}

// wrongKey is the error of a machine whose sync key is not the one the
// hub holds the user's records under.
func wrongKey(hubKey, ours string) error {
	return loom.Errorf(loom.EINVALID, "the hub holds your records sealed with sync key %s, and this machine's key is %s: give it your other machines' key with loom sync key --set (loom sync key on one of them prints it)", hubKey, ours)
}

// newConflicts returns the conflict forks r holds now that it did not
// before, of turns host wrote; err, the pull's, is returned as it is.
func newConflicts(ctx context.Context, r Replica, host synclog.HostID, before []sessionstore.Conflict, err error) ([]sessionstore.Conflict, error) {
	now, cerr := r.SyncConflicts(ctx)
	if cerr != nil {
		return nil, errors.Join(err, cerr)
	}
	var out []sessionstore.Conflict
	for _, x := range now {
		if x.Host == host && !slices.ContainsFunc(before, func(b sessionstore.Conflict) bool { return b.ID == x.ID }) {
			out = append(out, x)
		}
	}
	return out, err
}

// lastOf returns the index of host's last record that hosts say the hub
// holds, 0 when none.
func lastOf(hosts []loom.SyncHost, host synclog.HostID) int64 {
	for _, h := range hosts {
		if h.Host == string(host) {
			return h.Last
		}
	}
	return 0
}

// ownHost returns log's host; sync not set up is EINVALID.
func ownHost(ctx context.Context, log Log) (synclog.HostID, error) {
	host, err := log.SyncHost(ctx)
	if err == nil && host == "" {
		err = loom.Errorf(loom.EINVALID, "sync is not set up on this store")
	}
	return host, err
}

// Push sends the records of log that the hub does not hold yet, sealed
// with key, in batches, and returns how many it sent. It starts after
// the last record the hub holds of the host, so a push that was cut off
// goes on where the hub stopped, and one run twice sends nothing more.
func Push(ctx context.Context, c *hub.Client, log Log, key envelope.Key) (int, error) {
	host, err := ownHost(ctx, log)
	if err != nil {
		return 0, err
	}
	hosts, err := c.Own().Hosts(ctx)
	if err != nil {
		return 0, err
	}
	n, _, err := push(ctx, c, log, host, key, lastOf(hosts, host))
	return n, err
}

// push is Push of host's log after record last, which the hub holds;
// it returns how many records it sent and the last one the hub holds
// then.
func push(ctx context.Context, c *hub.Client, log Log, host synclog.HostID, key envelope.Key, last int64) (int, int64, error) {
	sent := 0
	for {
		recs, err := log.SyncLog(ctx, last, batch)
		if err != nil || len(recs) == 0 {
			return sent, last, err
		}
		out := make([]loom.SyncRecord, 0, len(recs))
		var size int64
		for _, r := range recs {
			// Sealed and signed with the sync key's signing key, on the
			// one path of records (docs/sync.md, "What is signed").
			h := synclog.Header{Host: host, Index: r.Index, HLC: r.HLC, KeyID: key.ID(), Signed: true}
			hb, err := h.MarshalBinary()
			if err != nil {
				return sent, last, err
			}
			body, err := synclog.SealEncoded(key, h, r.Payload)
			if err != nil {
				return sent, last, err
			}
			// The hub takes a batch of loom.MaxSyncBatchBytes at most,
			// and one record whatever its size.
			if size += int64(len(hb) + len(body)); len(out) > 0 && size > loom.MaxSyncBatchBytes {
				break
			}
			out = append(out, loom.SyncRecord{Host: string(host), Index: r.Index, Header: hb, Body: body})
		}
		if _, err := c.Own().Put(ctx, out); err != nil {
			return sent, last, fmt.Errorf("push records %d to %d: %w", out[0].Index, out[len(out)-1].Index, err)
		}
		sent += len(out)
		last = out[len(out)-1].Index
	}
}
