package sessionstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/loomhq/loom/synclog"
)

// HostMove is a store's move to a new host id when its log and the
// hub's copy of it part (a store restored from a backup or copied, a
// record at its index it did not write): its host was Old and is New;
// the first Shared records of Old's log are the same in the store and on
// the hub, and the Moved records the store wrote after them are New's
// first. The store applies the hub's records of Old after Shared as
// another machine's.
type HostMove struct {
	Old    synclog.HostID `json:"old"`
	New    synclog.HostID `json:"new"`
	Shared int64          `json:"shared"`
	Moved  int            `json:"moved"`
}

// LogRow is one row of the store's own log.
type LogRow struct {
	Row     int64
	Payload []byte
}

// Rehome gives the store a new host id when its log and the hub's copy
// of it part after their first shared records (see sqlite's SyncRehome).
// from is the host whose log was compared with the hub's: when the store
// is another host already (another process rehomed it), nothing is
// done. The records after shared are written again as the new host's
// first (the same stamps' HLCs and payloads; a trash's or a purge's
// view of the old host past shared becomes one of the new), the stamps
// of the changes they made move to the new host, and the old host
// counts as another machine of which the store has applied the first
// shared records. With junk, the new host's log gets a Retired record of
// the old host after shared, and the store stops the old host's log
// there itself.
func Rehome(ctx context.Context, tx Tx, from synclog.HostID, shared int64, junk bool) (HostMove, error) {
	old, base, err := tx.Pos(ctx)
	if err != nil {
		return HostMove{}, err
	}
	if old == "" {
		return HostMove{}, fmt.Errorf("sync is not set up on this store")
	}
	if old != from {
		// Another process of this machine did it meanwhile.
		return HostMove{Old: from, New: old}, nil
	}
	rows, err := tx.LogLen(ctx)
	if err != nil {
		return HostMove{}, fmt.Errorf("read the sync log: %w", err)
	}
	if shared > rows-base {
		return HostMove{}, fmt.Errorf("rehome after record %d of host %s: the store holds %d of its records", shared, old, rows-base)
	}
	var cut synclog.HLC // the HLC of the last shared record
	if shared > 0 {
		if cut, err = tx.LogHLC(ctx, base+shared); err != nil {
			return HostMove{}, fmt.Errorf("read the sync log: %w", err)
		}
	}
	r := HostMove{Old: old, New: synclog.NewHostID(), Shared: shared}
	move := func(v synclog.Vector) {
		if n := v[old]; n > shared {
			v[r.New], v[old] = n-shared, shared
		}
	}
	// Rows base+shared+1 … rows are the records to write again, as
	// rows+1 …: the new host's 1 … with base rows. Then the trashes and
	// purges among the copies get their view of the hosts moved.
	if r.Moved, err = tx.CopyLog(ctx, base+shared, rows); err != nil {
		return r, fmt.Errorf("write the sync log: %w", err)
	}
	if err := moveViews(ctx, tx, rows, move); err != nil {
		return r, err
	}
	if err := tx.Rehost(ctx, r, rows, cut); err != nil {
		return r, fmt.Errorf("give the store a new sync host: %w", err)
	}
	if err := rehomeStates(ctx, tx, r, cut, move); err != nil {
		return r, err
	}
	if junk {
		if err := tx.Retire(ctx, old, shared); err != nil {
			return r, fmt.Errorf("retire host %s: %w", old, err)
		}
		if err := (&SyncLog{tx: tx}).record(ctx, &synclog.Retired{Host: old, After: shared}); err != nil {
			return r, err
		}
	}
	return r, nil
}

// moveViews moves the view of the hosts of the trashes and purges of
// the log after row (the copies Rehome wrote) with move.
func moveViews(ctx context.Context, tx Tx, row int64, move func(synclog.Vector)) error {
	views, err := tx.ReadLog(ctx, row, synclog.TypeTrashed, synclog.TypePurged)
	if err != nil {
		return fmt.Errorf("read the sync log: %w", err)
	}
	for _, x := range views {
		p, err := synclog.Decode(x.Payload)
		if err != nil {
			return fmt.Errorf("read the sync log: %w", err)
		}
		switch p := p.(type) {
		case *synclog.Trashed:
			move(p.Seen)
		case *synclog.Purged:
			move(p.Seen)
		}
		b, err := synclog.Encode(p)
		if err != nil {
			return err
		}
		if err := tx.SetLogPayload(ctx, x.Row, b); err != nil {
			return fmt.Errorf("write the sync log: %w", err)
		}
	}
	return nil
}

// rehomeStates moves to r's new host the stamps of the sessions' states
// past cut (their lives, metadata and kept purges), and their view of
// the hosts with move.
func rehomeStates(ctx context.Context, tx Tx, r HostMove, cut synclog.HLC, move func(synclog.Vector)) error {
	stamp := func(st *synclog.Stamp) {
		if st.Host == r.Old && st.HLC > cut {
			st.Host = r.New
		}
	}
	if err := rewriteState(ctx, tx, LifeState, func(l *Life) {
		if l.Trash != nil {
			stamp(&l.Trash.Stamp)
			move(l.Trash.Seen)
		}
		stamp(&l.Restore)
		if l.Work != nil {
			move(l.Work)
		}
	}); err != nil {
		return err
	}
	if err := rewriteState(ctx, tx, metaState, func(m *any) { restamp(*m, r.Old, r.New, cut) }); err != nil {
		return err
	}
	// The sessions a purge past shared took are kept with the purge as
	// the new host wrote it (rescueID is of its stamp).
	if err := rewriteState(ctx, tx, PurgeKeptState, func(k *PurgeKept) {
		if k.Stamp.Host == r.Old && k.Stamp.HLC > cut {
			k.Stamp.Host, k.Index = r.New, k.Index-r.Shared
		}
		move(k.Seen)
	}); err != nil {
		return err
	}
	return nil
}

// rewriteState rewrites state kind of every session with edit.
func rewriteState[T any](ctx context.Context, tx StampSteps, kind State, edit func(*T)) error {
	all, err := tx.States(ctx, kind)
	if err != nil {
		return fmt.Errorf("read %s: %w", kind.what(), err)
	}
	for _, e := range all {
		var v T
		// Numbers stay as written: a stamp's HLC has more digits than a
		// float keeps.
		d := json.NewDecoder(strings.NewReader(e.Value))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return fmt.Errorf("read %s of %s: %w", kind.what(), e.ID, err)
		}
		edit(&v)
		if err := saveState(ctx, tx, kind, e.ID, v); err != nil {
			return err
		}
	}
	return nil
}

// restamp moves every stamp in v, a decoded JSON value, of host old
// later than cut to host to.
func restamp(v any, old, to synclog.HostID, cut synclog.HLC) {
	switch v := v.(type) {
	case map[string]any:
		if h, ok := v["host"].(string); ok && h == string(old) && len(v) == 2 {
			n, ok := v["hlc"].(json.Number)
			if x, err := strconv.ParseUint(string(n), 10, 64); ok && err == nil && synclog.HLC(x) > cut {
				v["host"] = string(to)
			}
			return
		}
		for _, x := range v {
			restamp(x, old, to, cut)
		}
	case []any:
		for _, x := range v {
			restamp(x, old, to, cut)
		}
	}
}
