package sessionstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// fakeApplyTx is a Tx without a database for the checks that
// come before a record changes anything, and for a record that changes
// no session: it records the steps asked of it, and any other step
// panics (the test then fails).
type fakeApplyTx struct {
	SyncSteps // nil: any step not below panics
	host      synclog.HostID
	applied   map[synclog.HostID]int64
	purged    map[string]bool
	steps     []string
}

func (f *fakeApplyTx) Host(context.Context) (synclog.HostID, error) { return f.host, nil }

func (f *fakeApplyTx) Applied(_ context.Context, h synclog.HostID) (int64, error) {
	return f.applied[h], nil
}

func (f *fakeApplyTx) Observe(context.Context, synclog.HLC) error {
	f.steps = append(f.steps, "observe")
	return nil
}

func (f *fakeApplyTx) SetApplied(_ context.Context, h synclog.HostID, idx int64) error {
	f.steps = append(f.steps, "applied")
	f.applied[h] = idx
	return nil
}

func (f *fakeApplyTx) Retire(context.Context, synclog.HostID, int64) error {
	f.steps = append(f.steps, "retire")
	return nil
}

func (f *fakeApplyTx) Purged(_ context.Context, id string) (bool, error) { return f.purged[id], nil }

// tx returns f as a Tx whose sync steps are f's; the other roles are
// nil.
func (f *fakeApplyTx) tx() Tx { return Tx{SyncSteps: f} }

func newFakeApply() *fakeApplyTx {
	return &fakeApplyTx{host: synclog.NewHostID(), applied: map[synclog.HostID]int64{}, purged: map[string]bool{}}
}

func TestApplyChecksTheRecordsOrder(t *testing.T) {
	ctx := t.Context()
	other := synclog.NewHostID()
	retired := &synclog.Retired{Host: synclog.NewHostID(), After: 3}

	tx := newFakeApply()
	if err := applyIn(ctx, tx.tx(), synclog.Header{Host: other, Index: 1}, retired); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tx.steps, []string{"observe", "retire", "applied"}) || tx.applied[other] != 1 {
		t.Fatalf("steps %v, applied %d: want the clock observed, the change made, then the index kept", tx.steps, tx.applied[other])
	}
	tx.steps = nil
	if err := applyIn(ctx, tx.tx(), synclog.Header{Host: other, Index: 1}, retired); err != nil || len(tx.steps) > 0 {
		t.Fatalf("a record applied already: %v, steps %v; want nothing done", err, tx.steps)
	}
	if err := applyIn(ctx, tx.tx(), synclog.Header{Host: other, Index: 3}, retired); !errors.Is(err, ErrGap) || len(tx.steps) > 0 {
		t.Fatalf("record 3 after 1: %v, steps %v; want ErrGap and nothing done", err, tx.steps)
	}
	if err := applyIn(ctx, tx.tx(), synclog.Header{Host: tx.host, Index: 1}, retired); err == nil || !strings.Contains(err.Error(), "own host") {
		t.Fatalf("a record of the store's own host: %v", err)
	}
	if err := applyIn(ctx, tx.tx(), synclog.Header{Host: other, Index: 0}, retired); err == nil {
		t.Fatal("a record of index 0 was taken")
	}
	off := newFakeApply()
	off.host = ""
	if err := applyIn(ctx, off.tx(), synclog.Header{Host: other, Index: 1}, retired); loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("a store without sync: %v, want EINVALID", err)
	}
}

func TestApplyDropsWhatAPurgeRemoved(t *testing.T) {
	tx := newFakeApply()
	other := synclog.NewHostID()
	tx.purged["s"] = true
	title := "renamed"
	change := &synclog.SessionChanged{SessionID: "s", Title: &title}
	if err := applyIn(t.Context(), tx.tx(), synclog.Header{Host: other, Index: 1}, change); err != nil {
		t.Fatal(err)
	}
	// Nothing but the clock and the index: the change is dropped.
	if !slices.Equal(tx.steps, []string{"observe", "applied"}) {
		t.Fatalf("steps %v, want the change to a purged session dropped", tx.steps)
	}
}
