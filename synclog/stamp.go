package synclog

import (
	"cmp"
	"fmt"

	"github.com/google/uuid"
)

// HostID names one machine's store in the sync: a random UUID made when
// the store first syncs, in its canonical text form. Every record says
// which host wrote it.
type HostID string

// NewHostID returns a new random host id.
func NewHostID() HostID { return HostID(uuid.NewString()) }

// Validate checks that h is a UUID in canonical form (lower-case hex with
// hyphens), the only spelling a host id has.
func (h HostID) Validate() error {
	u, err := uuid.Parse(string(h))
	if err != nil || u.String() != string(h) {
		return fmt.Errorf("host id %q is not a UUID in canonical form", string(h))
	}
	return nil
}

// Stamp is when and where a change was made: the HLC of the record that
// carries it and the host that wrote the record. Stamps are totally
// ordered: by HLC, then by host id, so that two hosts that made changes
// at the same reading still agree which came last. A host's own readings
// never repeat, so no two records have the same stamp.
type Stamp struct {
	HLC  HLC    `json:"hlc"`
	Host HostID `json:"host"`
}

// Compare returns -1, 0 or +1 as s is before, the same as or after o.
func (s Stamp) Compare(o Stamp) int {
	if c := cmp.Compare(s.HLC, o.HLC); c != 0 {
		return c
	}
	return cmp.Compare(s.Host, o.Host)
}

// Less reports whether s is before o.
func (s Stamp) Less(o Stamp) bool { return s.Compare(o) < 0 }

// IsZero reports whether s is the zero stamp, before every other.
func (s Stamp) IsZero() bool { return s == Stamp{} }

// String returns the HLC and the host: 2026-05-01T10:00:00.123Z/00003 on
// 3f2a….
func (s Stamp) String() string { return s.HLC.String() + " on " + string(s.Host) }

// Vector says what a host had seen when it wrote a record: for every host,
// the highest index of that host's records it had applied (its own
// included). A record of host h with index i was seen when i <= v[h].
// It is how a trash or a purge tells work it covered from work done
// meanwhile on another machine.
type Vector map[HostID]int64

// Saw reports whether v covers the record of host h with index i.
func (v Vector) Saw(h HostID, i int64) bool { return i <= v[h] }

// SawAll reports whether v covers every record that o covers.
func (v Vector) SawAll(o Vector) bool {
	for h, i := range o {
		if !v.Saw(h, i) {
			return false
		}
	}
	return true
}
