package memstore

import "github.com/loomhq/loom"

// The store in memory serves, of an engine's required services, what
// sessionstore's rules write through: source locks, one-transaction
// imports and project moves. It reads only what the rules' tests need,
// so it is no loom.Store (and no loom.Engine): an engine for those
// tests, not one a command opens.
var (
	_ loom.SourceLocker  = (*Store)(nil)
	_ loom.ImportApplier = (*Store)(nil)
	_ loom.ProjectMover  = (*Store)(nil)
)
