package secrets

import (
	"crypto/sha256"
	"slices"
	"sync"
)

// Remembering returns a detector that finds what d finds and remembers
// what it found in the last n texts it read, by their SHA-256: for a
// process that lives long and is asked about the same texts again (the
// warm recall of loom capture, redacting the turns of a project's
// sessions for hook after hook), where reading a text costs more than
// hashing it. A text is its own key: one changed by a byte is read
// again.
func (d *Detector) Remembering(n int) *Detector {
	c := *d
	c.memo = &memo{max: max(n, 1), found: map[[sha256.Size]byte][]Finding{}}
	return &c
}

// memo is what a remembering detector found, by text, its oldest
// forgotten first.
type memo struct {
	mu    sync.Mutex
	max   int
	found map[[sha256.Size]byte][]Finding
	order [][sha256.Size]byte
}

func (m *memo) get(k [sha256.Size]byte) ([]Finding, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.found[k]
	return slices.Clone(f), ok
}

func (m *memo) put(k [sha256.Size]byte, f []Finding) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.found[k]; ok {
		return
	}
	if len(m.order) >= m.max {
		delete(m.found, m.order[0])
		m.order = m.order[1:]
	}
	m.found[k] = slices.Clone(f)
	m.order = append(m.order, k)
}
