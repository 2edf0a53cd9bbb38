package sessionstore

import (
	"context"
	"errors"

	"github.com/loomhq/loom/synclog"
)

// LogRows are the rows of a store's own sync log as the engine keeps
// them: opaque payloads with their stamps' clock readings, numbered in
// order. Rows are the log's own numbering, which a rehome does not
// restart: a host's record i is row base+i. What a row holds (a record
// encoded, or a fragment of one) and its stamp are SyncLog's.
type LogRows interface {
	// Syncing reports whether the store keeps a sync log.
	Syncing(ctx context.Context) (bool, error)
	// Clock is the store's clock, which stamps its changes.
	Clock() *synclog.Clock
	// LastHLC returns the latest stamp this store has made or applied
	// (its log's last row's and what it applied), 0 for none: a change
	// made here, by any process, is stamped after it.
	LastHLC(ctx context.Context) (synclog.HLC, error)
	// AddLogRow adds row, stamped hlc, after the log's last and returns
	// its number.
	AddLogRow(ctx context.Context, hlc synclog.HLC, row []byte) (int64, error)
	// AppliedAll returns the index of the last record of each other
	// host the store has applied.
	AppliedAll(ctx context.Context) (synclog.Vector, error)
	// Pos returns the store's host and its base: how many rows of the
	// log belong to hosts the store was before.
	Pos(ctx context.Context) (host synclog.HostID, base int64, err error)
	// LogLen returns the number of the log's last row, 0 for none.
	LogLen(ctx context.Context) (int64, error)
	// LogHLC returns the stamp of row.
	LogHLC(ctx context.Context, row int64) (synclog.HLC, error)
	// CopyLog writes rows after+1 to upto again after the last, in
	// order, and returns how many it wrote.
	CopyLog(ctx context.Context, after, upto int64) (int, error)
	// ReadLog returns the rows after after whose payloads are of types.
	ReadLog(ctx context.Context, after int64, types ...synclog.Type) ([]LogRow, error)
	// SetLogPayload replaces the payload of row.
	SetLogPayload(ctx context.Context, row int64, payload []byte) error
	// Rehost makes the store host r.New, whose records start after row
	// base; keeps that it applied r.Old's records up to r.Shared; and
	// moves the message and part stamps of r.Old later than cut to
	// r.New.
	Rehost(ctx context.Context, r HostMove, base int64, cut synclog.HLC) error
}

// SyncLog is a store's sync log as a transaction writes it: once sync is
// set up on a store, each change it makes is also a record of its log,
// in the same transaction, which `loom sync` pushes to the hub. The log
// builds its records itself: it encodes a change (synclog.Encode),
// splits a record too large for the hub into fragments (synclog.Split),
// stamps it with the store's clock after every stamp the store has made
// or applied, and keeps the rows through the engine's LogRows, which
// hold them as opaque bytes. A store that does not sync has no log
// (nil), and records nothing.
type SyncLog struct {
	tx Tx
}

// openLog returns tx's sync log, nil when its store keeps none.
func openLog(ctx context.Context, tx Tx) (*SyncLog, error) {
	if tx.SyncSteps == nil {
		return nil, nil
	}
	on, err := tx.Syncing(ctx)
	if err != nil || !on {
		return nil, err
	}
	return &SyncLog{tx: tx}, nil
}

// errNoSync is a record asked of a store whose sync is not set up.
var errNoSync = errors.New("sync is not set up")

// Append adds p to the log as the store's next record and returns its
// stamp and its index. It keeps nothing else: the stamps of the change
// it records are localIn's. The stamp follows every stamp the store has
// made or applied, which another process may have written.
func (l *SyncLog) Append(ctx context.Context, p synclog.Payload) (synclog.Stamp, int64, error) {
	b, err := synclog.Encode(p)
	if err != nil {
		return synclog.Stamp{}, 0, err
	}
	last, err := l.tx.LastHLC(ctx)
	if err != nil {
		return synclog.Stamp{}, 0, err
	}
	clock := l.tx.Clock()
	if last > 0 {
		if err := clock.Observe(last); err != nil {
			return synclog.Stamp{}, 0, err
		}
	}
	host, base, err := l.tx.Pos(ctx)
	if err != nil {
		return synclog.Stamp{}, 0, err
	}
	if host == "" {
		return synclog.Stamp{}, 0, errNoSync
	}
	st := synclog.Stamp{HLC: clock.Now(), Host: host}
	// A record too large for the hub goes as fragments, one stamp for
	// them all; the last one's index is the change's.
	var row int64
	for _, frag := range synclog.Split(b) {
		if row, err = l.tx.AddLogRow(ctx, st.HLC, frag); err != nil {
			return synclog.Stamp{}, 0, err
		}
	}
	return st, row - base, nil
}

// Seen returns what the store had seen of each host's log when it made
// a change: its own records so far, and those of other hosts it has
// applied.
func (l *SyncLog) Seen(ctx context.Context) (synclog.Vector, error) {
	host, base, err := l.tx.Pos(ctx)
	if err != nil {
		return nil, err
	}
	if host == "" {
		return nil, errNoSync
	}
	last, err := l.tx.LogLen(ctx)
	if err != nil {
		return nil, err
	}
	v, err := l.tx.AppliedAll(ctx)
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = synclog.Vector{}
	}
	v[host] = last - base
	return v, nil
}

// MessageID returns the id of message seq of session id as the session
// reads it, "" when it has none: for a record that names a message.
func (l *SyncLog) MessageID(ctx context.Context, id string, seq int64) (string, error) {
	return l.tx.MessageID(ctx, id, seq)
}

// record adds p to the log (Append) and keeps the stamps of the change
// it records (localIn).
func (l *SyncLog) record(ctx context.Context, p synclog.Payload) error {
	_, _, err := l.recordAt(ctx, p)
	return err
}

// recordAt is record, returning the record's stamp and index.
func (l *SyncLog) recordAt(ctx context.Context, p synclog.Payload) (synclog.Stamp, int64, error) {
	st, idx, err := l.Append(ctx, p)
	if err != nil {
		return st, idx, err
	}
	return st, idx, localIn(ctx, l.tx, st, idx, p)
}
