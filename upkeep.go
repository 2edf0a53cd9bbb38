package loom

import "context"

// The upkeep of an engine's files: services a store may provide
// (Optional) that keep its files small, fast or free of text a
// redaction replaced. None is required: a store without one loses
// speed, or keeps what it replaced readable in its free pages until the
// engine reuses them, and says nothing is left to do.

// IndexMerger is a store whose search index is best merged after a
// large import. SQLite's FTS5 index is a set of segments merged a
// little at every write: after a bulk import, each append would
// otherwise pay for merging the imported entries, several times its
// own work (on a store of a million messages, 44 pages written per
// append instead of 13, and a p99 of 56 ms instead of 5).
type IndexMerger interface {
	// MergeIndex merges the search index's segments, in steps that
	// other writers may come between, until nothing is left to merge.
	MergeIndex(ctx context.Context) error
}

// Scrubber is a store that can remove from its files what rewritten
// messages leave behind (loom secrets redact: docs/security.md).
type Scrubber interface {
	Scrub(ctx context.Context) error
}

// ScrubMarker is a store that keeps, until a scrub has ended, that it
// is to be scrubbed, so that a redaction stopped before its end is
// scrubbed by the next one, or by the next sync (which scrubs, too,
// after applying another machine's redaction).
type ScrubMarker interface {
	// MarkScrub marks the store to be scrubbed.
	MarkScrub(ctx context.Context) error
	// ScrubIfPending scrubs the store when it is marked to, and
	// reports whether it did.
	ScrubIfPending(ctx context.Context) (bool, error)
}

// LocalLog is a store that keeps a sync log of its own changes (SQLite
// once sync is set up: docs/sync.md), which loom secrets redact
// rewrites with the store.
type LocalLog interface {
	// RedactLog rewrites the log's records that redact changes (it is
	// given a record's payloads and returns them redacted, nil to leave
	// them), and returns how many rows it rewrote.
	RedactLog(ctx context.Context, redact func(payloads [][]byte) ([][]byte, error)) (int, error)
	// SyncForgetPurged lets go what the store keeps of the sessions
	// its own purges up to index upTo of its log took, and returns how
	// many it let go.
	SyncForgetPurged(ctx context.Context, upTo int64) (int, error)
}
