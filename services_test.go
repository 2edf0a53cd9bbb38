package loom_test

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
)

// A store behind a secrets gate keeps its engine's services: those that
// read stored text are the gate's (they redact), the others the
// engine's own; a gate over a store given without its engine has none.
func TestGateKeepsServices(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d := secrets.Default()
	g := d.GateEngine(st)
	svc := g.Services()
	if svc.Edits != loom.EditStore(st) || svc.Calls != loom.CallCounter(st) || svc.SourceLocks != loom.SourceLocker(st) || svc.Sync != loom.SyncStore(st) {
		t.Errorf("through a gate, the edit index, counted calls, source locks or sync are not the engine's: %+v", svc)
	}
	if svc.Vectors != loom.VectorStore(g) || svc.Activity != loom.ActivityReader(g) || svc.IndexSize != loom.IndexSizer(g) {
		t.Errorf("through a gate, vectors, activity or the index size are not read through it: %+v", svc)
	}
	if again := d.GateEngine(g).Services(); again.Edits != loom.EditStore(st) || again.Vectors == nil {
		t.Errorf("a gate over a gate lost the engine's services: %+v", again)
	}
	if none := d.Gate(st).Services(); none != (loom.Services{}) {
		t.Errorf("a gate over a plain store has services: %+v", none)
	}
}
