package sqlite

import "github.com/loomhq/loom"

var _ loom.Engine = (*Store)(nil)

// Optional implements loom.Engine: every optional service but a hub's
// locks and a team hub, which only the PostgreSQL engine serves.
func (s *Store) Optional() loom.Optional {
	return loom.Optional{
		Tokens:      s,
		Shares:      s,
		Vectors:     s,
		Roots:       s,
		Activity:    s,
		IndexSize:   s,
		IndexMerger: s,
		Scrubber:    s,
		ScrubMarker: s,
		LocalLog:    s,
	}
}

// Reads implements loom.Reader: the services of Optional a way out may
// read.
func (s *Store) Reads() loom.Reads { return loom.ReadsOf(s.Optional()) }
