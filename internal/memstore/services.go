package memstore

import "github.com/loomhq/loom"

// Services returns what the store in memory serves of loom.Services:
// what sessionstore's rules write through (source locks,
// one-transaction imports, project moves); the rest it declares absent.
// It reads only what the rules' tests need, so it is no loom.Store (and
// no loom.Engine): an engine for those tests, not one a command opens.
func (s *Store) Services() loom.Services {
	return loom.Services{
		SourceLocks:   s,
		ImportApplier: s,
		ProjectMover:  s,
	}
}
