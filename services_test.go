package loom_test

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
)

// A store behind a secrets gate keeps the read services of its engine
// that a way out may use (loom.Reads), each read through the gate (they
// redact), and nothing else of it: the gate is a reader, with no writes
// and no engine services (secrets.TestGateIsAReaderOnly lists its
// methods); a gate over a gate reads them through both, and a gate over
// no store has none.
func TestGateKeepsServices(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d := secrets.Default()
	g := d.Gate(st)
	r := g.Reads()
	if r.Vectors == nil || r.Activity == nil || r.IndexSize == nil {
		t.Errorf("through a gate, vectors, activity or the index size are missing: %+v", r)
	}
	if r.Vectors == loom.VectorReader(st) || r.Activity == loom.ActivityReader(st) || r.IndexSize == loom.IndexSizer(st) {
		t.Errorf("through a gate, vectors, activity or the index size are the engine's own, unredacted: %+v", r)
	}
	var reader loom.Reader = g
	if _, ok := reader.(loom.Store); ok {
		t.Error("a gate is a store: a way out handed one could write")
	}
	again := d.Gate(g).Reads()
	if again.Vectors == nil || again.Vectors == r.Vectors {
		t.Errorf("a gate over a gate lost the engine's vectors or does not read them itself: %+v", again)
	}
	if none := d.Gate(nil).Reads(); none != (loom.Reads{}) {
		t.Errorf("a gate over no store has services: %+v", none)
	}
}
