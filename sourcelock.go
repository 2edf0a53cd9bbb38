package loom

import "context"

// SourceLocker is a Store that serialises the importers of one source
// file (a Claude Code session file, an opencode.db, a Codex rollout):
// a hook, a watcher and a one-shot import of the same file take turns,
// each reading the file, writing what it holds and recording it as read
// while no other importer of it does. Both SQL engines implement it.
type SourceLocker interface {
	// LockSource takes the import lock of userID's source file path for
	// this store handle, as Lock takes a session's: a live holder (a
	// process on this host that still runs, or a lease not expired)
	// makes it fail with ELOCKED, and a dead one is taken over. The
	// lease renews itself until it is released.
	LockSource(ctx context.Context, userID, path string) (Lease, error)
}
