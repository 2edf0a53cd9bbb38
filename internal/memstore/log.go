package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// KeepFragment implements sessionstore.FragmentSteps.
func (t *tx) KeepFragment(ctx context.Context, host synclog.HostID, idx int64, data []byte) error {
	t.st.fragments[fragKey{host, idx}] = slices.Clone(data)
	return nil
}

// Fragments implements sessionstore.FragmentSteps.
func (t *tx) Fragments(ctx context.Context, host synclog.HostID, first, last int64) ([]sessionstore.Fragment, error) {
	var out []sessionstore.Fragment
	for i := first; i <= last; i++ {
		if d, ok := t.st.fragments[fragKey{host, i}]; ok {
			out = append(out, sessionstore.Fragment{Index: i, Data: slices.Clone(d)})
		}
	}
	return out, nil
}

// DropFragments implements sessionstore.FragmentSteps.
func (t *tx) DropFragments(ctx context.Context, host synclog.HostID, last int64) error {
	for k := range t.st.fragments {
		if k.host == host && k.idx <= last {
			delete(t.st.fragments, k)
		}
	}
	return nil
}

// Retire implements sessionstore.ApplySteps: the earliest word holds.
func (t *tx) Retire(ctx context.Context, host synclog.HostID, after int64) error {
	if old, ok := t.st.retired[host]; !ok || after < old {
		t.st.retired[host] = after
	}
	return nil
}

// Pos implements sessionstore.LogRows.
func (t *tx) Pos(ctx context.Context) (synclog.HostID, int64, error) {
	return t.st.host, t.st.base, nil
}

// LogLen implements sessionstore.LogRows.
func (t *tx) LogLen(ctx context.Context) (int64, error) { return int64(len(t.st.log)), nil }

// LogHLC implements sessionstore.LogRows.
func (t *tx) LogHLC(ctx context.Context, row int64) (synclog.HLC, error) {
	if row < 1 || row > int64(len(t.st.log)) {
		return 0, fmt.Errorf("the sync log has no row %d", row)
	}
	return t.st.log[row-1].hlc, nil
}

// CopyLog implements sessionstore.LogRows.
func (t *tx) CopyLog(ctx context.Context, after, upto int64) (int, error) {
	upto = min(upto, int64(len(t.st.log)))
	n := 0
	for i := after; i < upto; i++ {
		r := t.st.log[i]
		t.st.log = append(t.st.log, logRow{hlc: r.hlc, payload: slices.Clone(r.payload)})
		n++
	}
	return n, nil
}

// ReadLog implements sessionstore.LogRows: a payload's second byte is
// its type.
func (t *tx) ReadLog(ctx context.Context, after int64, types ...synclog.Type) ([]sessionstore.LogRow, error) {
	var out []sessionstore.LogRow
	for i := max(after, 0); i < int64(len(t.st.log)); i++ {
		p := t.st.log[i].payload
		if len(p) > 1 && slices.Contains(types, synclog.Type(p[1])) {
			out = append(out, sessionstore.LogRow{Row: i + 1, Payload: slices.Clone(p)})
		}
	}
	return out, nil
}

// SetLogPayload implements sessionstore.LogRows.
func (t *tx) SetLogPayload(ctx context.Context, row int64, payload []byte) error {
	if row >= 1 && row <= int64(len(t.st.log)) {
		t.st.log[row-1].payload = slices.Clone(payload)
	}
	return nil
}

// Rehost implements sessionstore.LogRows.
func (t *tx) Rehost(ctx context.Context, r sessionstore.HostMove, base int64, cut synclog.HLC) error {
	if t.st.host != "" {
		t.st.host = r.New
	}
	t.st.base = base
	t.st.applied[r.Old] = r.Shared
	for id, s := range t.st.stamps {
		if s.st.Host == r.Old && s.st.HLC > cut {
			s.st.Host = r.New
		}
		if s.usage != nil && s.usage.Host == r.Old && s.usage.HLC > cut {
			u := *s.usage
			u.Host = r.New
			s.usage = &u
		}
		t.st.stamps[id] = s
	}
	for k, st := range t.st.partStamps {
		if st.Host == r.Old && st.HLC > cut {
			st.Host = r.New
			t.st.partStamps[k] = st
		}
	}
	return nil
}

// Syncing implements sessionstore.LogRows.
func (t *tx) Syncing(ctx context.Context) (bool, error) { return t.st.host != "", nil }

// Clock implements sessionstore.LogRows.
func (t *tx) Clock() *synclog.Clock { return t.s.clock }

// LastHLC implements sessionstore.LogRows: the latest stamp of the log's
// rows and of the records applied.
func (t *tx) LastHLC(ctx context.Context) (synclog.HLC, error) {
	last := t.st.appliedHLC
	if n := len(t.st.log); n > 0 {
		last = max(last, t.st.log[n-1].hlc)
	}
	return last, nil
}

// AddLogRow implements sessionstore.LogRows.
func (t *tx) AddLogRow(ctx context.Context, hlc synclog.HLC, row []byte) (int64, error) {
	t.st.log = append(t.st.log, logRow{hlc: hlc, payload: slices.Clone(row)})
	return int64(len(t.st.log)), nil
}

// AppliedAll implements sessionstore.LogRows.
func (t *tx) AppliedAll(ctx context.Context) (synclog.Vector, error) {
	v := synclog.Vector{}
	for h, i := range t.st.applied {
		v[h] = i
	}
	return v, nil
}

// SyncLast implements sessionstore.SyncTx.
func (t *tx) SyncLast(ctx context.Context, user, host string) (int64, error) {
	recs := t.st.hub[[2]string{user, host}]
	if len(recs) == 0 {
		return 0, nil
	}
	return recs[len(recs)-1].Index, nil
}

// SyncHeld implements sessionstore.SyncTx.
func (t *tx) SyncHeld(ctx context.Context, user, host string, idxs []int64) ([]loom.SyncRecord, error) {
	var out []loom.SyncRecord
	for _, r := range t.st.hub[[2]string{user, host}] {
		if slices.Contains(idxs, r.Index) {
			out = append(out, r)
		}
	}
	return out, nil
}

// SyncAppend implements sessionstore.SyncTx.
func (t *tx) SyncAppend(ctx context.Context, user, host string, recs []loom.SyncRecord, at time.Time) error {
	k := [2]string{user, host}
	held := slices.Clone(t.st.hub[k])
	for _, r := range recs {
		r.Header = slices.Clone(sqlstore.SyncHeader(r))
		r.Body = slices.Clone(r.Body)
		held = append(held, r)
	}
	t.st.hub[k] = held
	return nil
}
