package sqlite

import "github.com/loomhq/loom"

var _ loom.Engine = (*Store)(nil)

// Services implements loom.Engine: everything but a hub's locks and a
// team hub, which only the PostgreSQL engine serves.
func (s *Store) Services() loom.Services {
	return loom.Services{
		Calls:         s,
		SourceLocks:   s,
		ImportApplier: s,
		ProjectMover:  s,
		Originals:     s,
		Tokens:        s,
		Shares:        s,
		Sync:          s,
		Vectors:       s,
		Edits:         s,
		EditVersions:  s,
		Roots:         s,
		Activity:      s,
		IndexSize:     s,
		IndexMerger:   s,
		Scrubber:      s,
		ScrubMarker:   s,
		LocalLog:      s,
	}
}

// Reads implements loom.Reader: the services of Services a way out may
// read.
func (s *Store) Reads() loom.Reads { return loom.ReadsOf(s.Services()) }
