package conformance

import (
	"testing"

	"github.com/loomhq/loom"
)

// Capability is one of loom.Optional as the suite holds an engine to
// it: the engine may declare it absent by leaving it nil, and the test
// of its contract is then skipped, saying so. The services every engine
// must provide are no capability here: they are methods of loom.Engine,
// so an engine that lacks one does not compile.
type Capability struct {
	// Name is the field of loom.Optional.
	Name string
	// Why is what is missing without it.
	Why string
	has func(loom.Optional) bool
}

// Capabilities are loom.Optional, field by field, in the order of its
// declaration. A field added to loom.Optional without a line here fails
// TestCapabilitiesCoverServices.
var Capabilities = []Capability{
	{"Tokens", "loom serve cannot run on the store", func(s loom.Optional) bool { return s.Tokens != nil }},
	{"Shares", "no share links", func(s loom.Optional) bool { return s.Shares != nil }},
	{"HubLocks", "a hub's pushes are limited per process, not over every process on the store", func(s loom.Optional) bool { return s.HubLocks != nil }},
	{"TeamHub", "the store can be no team hub", func(s loom.Optional) bool { return s.TeamHub != nil }},
	{"TeamCheckpoints", "a hub process that starts verifies each team's chain from its first entry", func(s loom.Optional) bool { return s.TeamCheckpoints != nil }},
	{"Vectors", "search ranks by keywords only", func(s loom.Optional) bool { return s.Vectors != nil }},
	{"Roots", "loom blame looks only at a project's own roots", func(s loom.Optional) bool { return s.Roots != nil }},
	{"Activity", "insights have no activity", func(s loom.Optional) bool { return s.Activity != nil }},
	{"IndexSize", "recall ranks a large index by the store's search alone", func(s loom.Optional) bool { return s.IndexSize != nil }},
	{"IndexMerger", "after a large import, appends pay for merging the search index a little at a time", func(s loom.Optional) bool { return s.IndexMerger != nil }},
	{"Scrubber", "the text a redaction replaced stays readable in the store's free pages until the engine reuses them", func(s loom.Optional) bool { return s.Scrubber != nil }},
	{"ScrubMarker", "a redaction stopped before its end leaves the store unscrubbed until the next one", func(s loom.Optional) bool { return s.ScrubMarker != nil }},
	{"LocalLog", "the store keeps no sync log of its own, so there is none to redact (a store shared by its users' machines already)", func(s loom.Optional) bool { return s.LocalLog != nil }},
}

// testServices logs each optional service the engine declares absent,
// and what is missing without it.
func testServices(t *testing.T, open Opener) {
	st := open(t)
	svc := st.Optional()
	for _, c := range Capabilities {
		if !c.has(svc) {
			t.Logf("%T declares %s absent: %s", st, c.Name, c.Why)
		}
	}
}

// optional returns v, the engine's optional service name, for the test
// of its contract, and skips the test when the engine declares it
// absent.
func optional[T comparable](t *testing.T, st loom.Engine, name string, v T) T {
	t.Helper()
	var none T
	if v == none {
		t.Skipf("%T declares %s absent", st, name)
	}
	return v
}
