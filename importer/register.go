package importer

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Every agent's format registers itself here, from its package's init
// (importer.Register(Format{})); package importer/agents imports every
// such package, and the command line reads the formats from there. So
// adding an agent touches its own package, one line of importer/agents
// and the docs.

var registry struct {
	mu      sync.Mutex
	formats []Format
}

// Register adds f to the formats loom reads. A second format with the same tool name is a programming
// error: Register panics, at start.
func Register(f Format) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, g := range registry.formats {
		if g.Tool() == f.Tool() {
			panic(fmt.Sprintf("importer: two formats named %q", f.Tool()))
		}
	}
	registry.formats = append(registry.formats, f)
}

// Registered returns the formats registered, by tool name.
func Registered() []Format {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	out := slices.Clone(registry.formats)
	slices.SortFunc(out, func(a, b Format) int { return strings.Compare(a.Tool(), b.Tool()) })
	return out
}
