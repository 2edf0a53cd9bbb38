package fake

import (
	"context"

	"github.com/loomhq/loom"
)

// Scrubber is a fake loom.Scrubber.
type Scrubber struct {
	ScrubFn func(ctx context.Context) error
}

var _ loom.Scrubber = (*Scrubber)(nil)

// Scrub calls ScrubFn.
func (fk *Scrubber) Scrub(ctx context.Context) error {
	return call(fk.ScrubFn, "Scrubber.Scrub")(ctx)
}

// ScrubMarker is a fake loom.ScrubMarker.
type ScrubMarker struct {
	MarkScrubFn      func(ctx context.Context) error
	ScrubIfPendingFn func(ctx context.Context) (bool, error)
}

var _ loom.ScrubMarker = (*ScrubMarker)(nil)

// MarkScrub calls MarkScrubFn.
func (fk *ScrubMarker) MarkScrub(ctx context.Context) error {
	return call(fk.MarkScrubFn, "ScrubMarker.MarkScrub")(ctx)
}

// ScrubIfPending calls ScrubIfPendingFn.
func (fk *ScrubMarker) ScrubIfPending(ctx context.Context) (bool, error) {
	return call(fk.ScrubIfPendingFn, "ScrubMarker.ScrubIfPending")(ctx)
}

// LocalLog is a fake loom.LocalLog.
type LocalLog struct {
	RedactLogFn        func(ctx context.Context, redact func(payloads [][]byte) ([][]byte, error)) (int, error)
	SyncForgetPurgedFn func(ctx context.Context, upTo int64) (int, error)
}

var _ loom.LocalLog = (*LocalLog)(nil)

// RedactLog calls RedactLogFn.
func (fk *LocalLog) RedactLog(ctx context.Context, redact func(payloads [][]byte) ([][]byte, error)) (int, error) {
	return call(fk.RedactLogFn, "LocalLog.RedactLog")(ctx, redact)
}

// SyncForgetPurged calls SyncForgetPurgedFn.
func (fk *LocalLog) SyncForgetPurged(ctx context.Context, upTo int64) (int, error) {
	return call(fk.SyncForgetPurgedFn, "LocalLog.SyncForgetPurged")(ctx, upTo)
}
