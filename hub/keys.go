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
type keys struct {
	mu   sync.Mutex
	byID map[string]string // user → key id, once known
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
// the user's (ECONFLICT, 409), naming both and what to run.
func (k *keys) check(ctx context.Context, st loom.SyncStore, user string, recs []loom.SyncRecord) error {
	want, err := k.keyOf(ctx, st, user)
	if err != nil {
		return err
	}
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
