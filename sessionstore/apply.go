package sessionstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// ApplySteps are what applying another host's records keeps of the
// hosts: this store's own, what it applied of the others', its clock.
type ApplySteps interface {
	// Host returns the store's host id, "" when sync is not set up.
	Host(ctx context.Context) (synclog.HostID, error)
	// SetHost keeps host as the store's host id, sync's being set up.
	SetHost(ctx context.Context, host synclog.HostID) error
	// Applied returns the index of the last record of host the store
	// has applied, 0 for none.
	Applied(ctx context.Context, host synclog.HostID) (int64, error)
	// SetApplied keeps that the store has applied host's records up
	// to idx.
	SetApplied(ctx context.Context, host synclog.HostID, idx int64) error
	// Observe moves the store's clock past hlc, for every process of
	// this store: it fails with synclog.ErrClockAhead for a stamp too
	// far ahead.
	Observe(ctx context.Context, hlc synclog.HLC) error
	// Owner names this process as a lock holder.
	Owner() string
	// Replaced keeps that a change this transaction applies replaces
	// text by redaction markers (another machine's loom secrets
	// redact): once it commits, the store is to be scrubbed, so that
	// the text replaced does not stay readable in its files (free
	// pages, the search index's old segments, the write-ahead log).
	Replaced(ctx context.Context) error
	// Retire stops host's log after index after, unless it stops
	// earlier.
	Retire(ctx context.Context, host synclog.HostID, after int64) error
}

// FragmentSteps keep the fragments of a record too large for the hub
// until its last one arrives.
type FragmentSteps interface {
	// KeepFragment keeps fragment data, record idx of host; Fragments
	// returns host's kept fragments from first to last, by index;
	// DropFragments lets those up to last go.
	KeepFragment(ctx context.Context, host synclog.HostID, idx int64, data []byte) error
	Fragments(ctx context.Context, host synclog.HostID, first, last int64) ([]Fragment, error)
	DropFragments(ctx context.Context, host synclog.HostID, last int64) error
}

// ErrGap reports a record whose index is not the next one of its host:
// the records between were lost on the way, and applying past them would
// leave this store without their changes for good.
var ErrGap = errors.New("sync record out of order")

// ErrWaits reports a record that follows a change this store does not
// hold yet (a message, a session): it is applied after that change. It
// is synclog.ErrWait, which syncrun.Pull looks for.
var ErrWaits = synclog.ErrWait

// NotAppliedError reports a record of a kind this loom does not know, as
// a newer loom may write. The record is never skipped: skipping it would
// make this store's copy differ from the others' for good.
type NotAppliedError struct {
	Type synclog.Type
}

func (e *NotAppliedError) Error() string {
	return fmt.Sprintf("this loom cannot apply %s records: a newer loom wrote them; update loom on this machine", e.Type)
}

// maxConflictDepth bounds how many conflict forks one record goes down
// through.
const maxConflictDepth = 1000

// applyIn applies record p of another host, whose header is h, in tx, by
// the merge rules of docs/sync.md. It records nothing in the store's own
// log: applying is not a change of this host's. The store keeps the
// index of the last record it applied of each host: a record applied
// already changes nothing, and one that does not follow it is ErrGap. A
// record stamped too far ahead of this machine's clock is
// synclog.ErrClockAhead.
func applyIn(ctx context.Context, tx Tx, h synclog.Header, p synclog.Payload) error {
	if err := h.Host.Validate(); err != nil {
		return fmt.Errorf("apply sync record: %w", err)
	}
	if h.Index == 0 {
		return fmt.Errorf("apply sync record of host %s: index 0 (a host's records are numbered from 1)", h.Host)
	}
	self, err := tx.Host(ctx)
	switch {
	case err != nil:
		return err
	case self == "":
		return loom.Errorf(loom.EINVALID, "sync is not set up on this store")
	case self == h.Host:
		return fmt.Errorf("apply sync record %d of host %s: that is this store's own host", h.Index, h.Host)
	}
	last, err := tx.Applied(ctx, h.Host)
	if err != nil {
		return err
	}
	if h.Index <= last {
		return nil
	}
	if h.Index != last+1 {
		return fmt.Errorf("%w: record %d of host %s, and this store has applied its records up to %d: records %d to %d are missing",
			ErrGap, h.Index, h.Host, last, last+1, h.Index-1)
	}
	if err := tx.Observe(ctx, h.HLC); err != nil {
		return err
	}
	if err := applyRecord(ctx, tx, h, p); err != nil {
		return fmt.Errorf("apply record %d of host %s (%s): %w", h.Index, h.Host, p.Type(), err)
	}
	return tx.SetApplied(ctx, h.Host, h.Index)
}

// applyRecord makes the change p, the record h heads, to the store. A
// record for a session purged here is dropped; one that works in a
// session counts in the session's life (Life).
func applyRecord(ctx context.Context, tx Tx, h synclog.Header, p synclog.Payload) error {
	if f, ok := p.(*synclog.Fragment); ok {
		whole, err := fragment(ctx, tx, h, f)
		if err != nil || whole == nil {
			return err
		}
		p = whole
	}
	if gone, err := forPurged(ctx, tx, p); err != nil || gone {
		if err == nil {
			// Work the purge had not seen goes to the copy saved of
			// the session (a purge keeps its view only of sessions
			// it purged, so no other record pays for the look).
			_, err = rescueUnseen(ctx, tx, h, p)
		}
		return err
	}
	if err := applyChange(ctx, tx, h.Stamp(), p); err != nil {
		return err
	}
	return lived(ctx, tx, h.Host, h.Index, p)
}

// applyChange makes the change p, stamped st, to the store.
func applyChange(ctx context.Context, tx Tx, st synclog.Stamp, p synclog.Payload) error {
	switch p := p.(type) {
	case *synclog.Retired:
		return tx.Retire(ctx, p.Host, p.After)
	case *synclog.SessionCreated:
		return applyCreated(ctx, tx, st, p)
	case *synclog.MessagesAppended:
		return applyAppend(ctx, tx, st, p)
	case *synclog.Imported:
		return applyImported(ctx, tx, st, p)
	case *synclog.SessionChanged:
		return applyChanged(ctx, tx, st, p)
	case *synclog.PartUpdated:
		return applyPart(ctx, tx, st, p)
	case *synclog.UsageUpdated:
		return applyUsage(ctx, tx, st, p)
	case *synclog.Forked:
		return applyForked(ctx, tx, st, p)
	case *synclog.Rewound:
		return applyRewound(ctx, tx, st, p)
	case *synclog.Trashed:
		return applyTrashed(ctx, tx, st, p)
	case *synclog.Restored:
		return applyRestored(ctx, tx, st, p)
	case *synclog.Purged:
		return applyPurged(ctx, tx, st, p)
	case *synclog.OriginalKept:
		return applyOriginal(ctx, tx, p)
	case *synclog.TimesSettled:
		return applySettled(ctx, tx, p)
	}
	return &NotAppliedError{Type: p.Type()}
}

// fragment keeps fragment f of host h.Host until the last one has
// arrived; then it returns the record they make, which applies under
// the last one's header (the index that marks the change's work), and
// lets them go. Fragments apply in index order like any record, so the
// ones before the last are the host's records just before it.
func fragment(ctx context.Context, tx FragmentSteps, h synclog.Header, f *synclog.Fragment) (synclog.Payload, error) {
	if err := tx.KeepFragment(ctx, h.Host, h.Index, f.Data); err != nil {
		return nil, fmt.Errorf("keep fragment %d of %d: %w", f.Part, f.Of, err)
	}
	if f.Part < f.Of {
		return nil, nil
	}
	first := h.Index - int64(f.Of) + 1
	kept, err := tx.Fragments(ctx, h.Host, first, h.Index)
	if err != nil {
		return nil, fmt.Errorf("read fragments: %w", err)
	}
	frags := make([]*synclog.Fragment, 0, len(kept))
	for _, k := range kept {
		frags = append(frags, &synclog.Fragment{Part: uint32(k.Index - first + 1), Of: f.Of, Data: k.Data})
	}
	if len(frags) != int(f.Of) {
		return nil, fmt.Errorf("%w: record %d of host %s is the last of %d fragments, and %d of them are here", synclog.ErrCorrupt, h.Index, h.Host, f.Of, len(frags))
	}
	p, err := synclog.Join(frags)
	if err != nil {
		return nil, err
	}
	if err := tx.DropFragments(ctx, h.Host, h.Index); err != nil {
		return nil, fmt.Errorf("let fragments go: %w", err)
	}
	return p, nil
}
