package hub

import (
	"context"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// keys is what the hub knows of each user's sync key: the id in the
// header of the first record it received of theirs. A machine with
// another key would push records none of the user's other machines can
// open, and stop their sync for good, so the hub refuses them. The hub
// reads headers only, which name the key, never what it seals.
//
// A user's first push sets the key, whichever process of the hub takes
// it: first pushes are one after the other, under the user's lock over
// every process on a shared store (loom.HubLocks), or this process's
// own otherwise. Once set the key never changes (the hub deletes no
// user's records), so each process remembers it.
type keys struct {
	mu   sync.Mutex
	byID map[string]string // user → key id, once known
	// first is the lock of first pushes without shared locks.
	first sync.Mutex
}

// keyOf returns the id of the key user's records are sealed with, ""
// when the hub holds none of theirs with a header it reads.
func (k *keys) keyOf(ctx context.Context, st loom.SyncStore, user string) (string, error) {
	k.mu.Lock()
	id, ok := k.byID[user]
	k.mu.Unlock()
	if ok {
		return id, nil
	}
	hosts, err := st.SyncHosts(ctx, user)
	if err != nil {
		return "", err
	}
	var first time.Time
	for _, h := range hosts {
		recs, err := st.SyncRecords(ctx, user, h.Host, 0, 1)
		if err != nil {
			return "", err
		}
		if len(recs) == 0 {
			continue
		}
		var hd synclog.Header
		if hd.UnmarshalBinary(recs[0].Header) != nil {
			continue
		}
		if id == "" || recs[0].ReceivedAt.Before(first) {
			id, first = hd.KeyID, recs[0].ReceivedAt
		}
	}
	if id != "" {
		k.remember(user, id)
	}
	return id, nil
}

func (k *keys) remember(user, id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.byID == nil {
		k.byID = map[string]string{}
	}
	if _, ok := k.byID[user]; !ok {
		k.byID[user] = id
	}
}

// check refuses a batch holding a record sealed with another key than
// the user's (ECONFLICT, 409), naming both and what to run. Before the
// user has a key, the batch's first record sets it: check then returns
// with the user's first-push lock held, for the caller to give back with
// unlock once the batch is stored.
func (k *keys) check(ctx context.Context, st loom.SyncStore, locks loom.HubLocks, user string, recs []loom.SyncRecord) (unlock func(), err error) {
	want, err := k.keyOf(ctx, st, user)
	if err != nil {
		return nil, err
	}
	unlock = func() {}
	if want == "" {
		switch {
		case locks != nil:
			if unlock, err = locks.LockUser(ctx, "sync key", user); err != nil {
				return nil, err
			}
		default:
			k.first.Lock()
			unlock = k.first.Unlock
		}
		// Another push may have set it while this one waited.
		if want, err = k.keyOf(ctx, st, user); err != nil {
			unlock()
			return nil, err
		}
	}
	if err := k.match(want, recs); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// match refuses a batch holding a record sealed with another key than
// want; with want "", the batch's first record sets it.
func (k *keys) match(want string, recs []loom.SyncRecord) error {
	for _, r := range recs {
		var hd synclog.Header
		if hd.UnmarshalBinary(r.Header) != nil {
			continue
		}
		if want == "" {
			want = hd.KeyID // the batch's first record sets it
			continue
		}
		if hd.KeyID != want {
			return loom.Errorf(loom.ECONFLICT, "record %d of host %s is sealed with sync key %s, and your records here are sealed with sync key %s: this machine has another key than your others; give it theirs with loom sync key --set (loom sync key on one of them prints it)",
				r.Index, r.Host, hd.KeyID, want)
		}
	}
	return nil
}
