package postgres

import "github.com/loomhq/loom"

var _ loom.Engine = (*Store)(nil)

// Optional implements loom.Engine: every optional service but merging
// the search index, scrub marks and a sync log of its own, which only
// the SQLite engine has.
func (s *Store) Optional() loom.Optional {
	return loom.Optional{
		Tokens:          s,
		Shares:          s,
		HubLocks:        s,
		TeamHub:         s,
		TeamCheckpoints: s,
		Vectors:         s,
		Roots:           s,
		Activity:        s,
		IndexSize:       s,
		Scrubber:        s,
	}
}

// Reads implements loom.Reader: the services of Optional a way out may
// read.
func (s *Store) Reads() loom.Reads { return loom.ReadsOf(s.Optional()) }
