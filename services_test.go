package loom_test

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
)

// A store behind a secrets gate keeps the services of its engine that
// a way out may use: those that read stored text are the gate's (they
// redact), those that read none the engine's own, and those that read
// text the gate does not redact (the edit index, sync, the originals)
// are withheld, left to an edge that takes them from the engine below
// (secrets.TestGateDecidesEveryService holds each); a gate over a store
// given without its engine has none.
func TestGateKeepsServices(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d := secrets.Default()
	g := d.GateEngine(st)
	svc := g.Services()
	if svc.Calls != loom.CallCounter(st) || svc.SourceLocks != loom.SourceLocker(st) {
		t.Errorf("through a gate, counted calls or source locks are not the engine's: %+v", svc)
	}
	if svc.Edits != nil || svc.Sync != nil || svc.Originals != nil {
		t.Errorf("through a gate, the edit index, sync or the originals are handed on unredacted: %+v", svc)
	}
	if svc.Vectors != loom.VectorStore(g) || svc.Activity != loom.ActivityReader(g) || svc.IndexSize != loom.IndexSizer(g) {
		t.Errorf("through a gate, vectors, activity or the index size are not read through it: %+v", svc)
	}
	again := d.GateEngine(g)
	if svc := again.Services(); svc.Calls != loom.CallCounter(st) || svc.Vectors != loom.VectorStore(again) {
		t.Errorf("a gate over a gate lost the engine's services: %+v", svc)
	}
	if again.Below() != loom.Engine(st) {
		t.Errorf("a gate over a gate reads from %v, not the engine", again.Below())
	}
	if none := d.Gate(st).Services(); none != (loom.Services{}) {
		t.Errorf("a gate over a plain store has services: %+v", none)
	}
}
