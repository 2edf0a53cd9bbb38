package conformance

import (
	"testing"

	"github.com/loomhq/loom"
)

// Capability is one of loom.Services as the suite holds an engine to
// it: a required one must be there (the Services test fails on a nil
// one, and so does its contract's test); an optional one the engine may
// declare absent by leaving it nil, and its contract's test is then
// skipped, saying so.
type Capability struct {
	// Name is the field of loom.Services.
	Name string
	// Required: every engine must provide it.
	Required bool
	// Why is what goes wrong without it (required) or what is missing
	// (optional).
	Why string
	has func(loom.Services) bool
}

// Capabilities are loom.Services, field by field, in the order of its
// declaration. A field added to loom.Services without a line here fails
// TestCapabilitiesCoverServices.
var Capabilities = []Capability{
	{"Calls", true, "a conversation an agent copies into a new file (a resume) is counted twice", func(s loom.Services) bool { return s.Calls != nil }},
	{"SourceLocks", true, "a hook and a watcher importing one file at once store its messages twice", func(s loom.Services) bool { return s.SourceLocks != nil }},
	{"ImportApplier", true, "an import's sessions, changes and records of files are not written in one transaction", func(s loom.Services) bool { return s.ImportApplier != nil }},
	{"ProjectMover", true, "a project's sessions move one by one, and a failure leaves them split", func(s loom.Services) bool { return s.ProjectMover != nil }},
	{"Originals", true, "imported source files are not kept, so loom session reimport and redact of originals have nothing to read", func(s loom.Services) bool { return s.Originals != nil }},
	{"Tokens", false, "loom serve cannot run on the store", func(s loom.Services) bool { return s.Tokens != nil }},
	{"Shares", false, "no share links", func(s loom.Services) bool { return s.Shares != nil }},
	{"Sync", true, "the store can be no sync hub", func(s loom.Services) bool { return s.Sync != nil }},
	{"HubLocks", false, "a hub's pushes are limited per process, not over every process on the store", func(s loom.Services) bool { return s.HubLocks != nil }},
	{"TeamHub", false, "the store can be no team hub", func(s loom.Services) bool { return s.TeamHub != nil }},
	{"Vectors", false, "search ranks by keywords only", func(s loom.Services) bool { return s.Vectors != nil }},
	{"Edits", true, "loom blame finds no session that wrote a line", func(s loom.Services) bool { return s.Edits != nil }},
	{"EditVersions", true, "loom blame keeps no answer from one run to the next", func(s loom.Services) bool { return s.EditVersions != nil }},
	{"Roots", false, "loom blame looks only at a project's own roots", func(s loom.Services) bool { return s.Roots != nil }},
	{"Activity", false, "insights have no activity", func(s loom.Services) bool { return s.Activity != nil }},
	{"IndexSize", false, "recall ranks a large index by the store's search alone", func(s loom.Services) bool { return s.IndexSize != nil }},
	{"IndexMerger", false, "after a large import, appends pay for merging the search index a little at a time", func(s loom.Services) bool { return s.IndexMerger != nil }},
	{"Scrubber", false, "the text a redaction replaced stays readable in the store's free pages until the engine reuses them", func(s loom.Services) bool { return s.Scrubber != nil }},
	{"ScrubMarker", false, "a redaction stopped before its end leaves the store unscrubbed until the next one", func(s loom.Services) bool { return s.ScrubMarker != nil }},
	{"LocalLog", false, "the store keeps no sync log of its own, so there is none to redact (a store shared by its users' machines already)", func(s loom.Services) bool { return s.LocalLog != nil }},
}

// capability returns the Capability of name.
func capability(t *testing.T, name string) Capability {
	t.Helper()
	for _, c := range Capabilities {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no capability %s in conformance.Capabilities", name)
	return Capability{}
}

// testServices checks the engine's services: each required one is
// there, and each optional one it lacks is said to be declared absent.
func testServices(t *testing.T, open Opener) {
	st := open(t)
	svc := st.Services()
	for _, c := range Capabilities {
		switch {
		case c.has(svc):
		case c.Required:
			t.Errorf("%T provides no %s (loom.Services.%s is nil), which every engine must: without it %s", st, c.Name, c.Name, c.Why)
		default:
			t.Logf("%T declares %s absent: %s", st, c.Name, c.Why)
		}
	}
}

// service returns v, the engine's service name, for the test of its
// contract: a nil one fails the test when the capability is required,
// and skips it when the engine may declare it absent.
func service[T comparable](t *testing.T, st loom.Engine, name string, v T) T {
	t.Helper()
	var none T
	if v != none {
		return v
	}
	c := capability(t, name)
	if c.Required {
		t.Fatalf("%T provides no %s (loom.Services.%s is nil), which every engine must: without it %s", st, name, name, c.Why)
	}
	t.Skipf("%T declares %s absent", st, name)
	return v
}
