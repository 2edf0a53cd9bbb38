package loom_test

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
)

// StoreAs finds the engine's store, and what only it provides, under a
// secrets gate; a store that keeps no such thing
// finds nothing.
func TestStoreAs(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d := secrets.Default()
	wrapped := d.Gate(st)
	for name, s := range map[string]loom.Store{"the engine's store": st, "a gate": wrapped} {
		if es, ok := loom.StoreAs[loom.EditStore](s); !ok || es != loom.EditStore(st) {
			t.Errorf("%s: the edit index %v, %v; want the engine's", name, es, ok)
		}
		if under, ok := loom.StoreAs[loom.Store](s); !ok || under != loom.Store(st) {
			t.Errorf("%s: the store under it %v, %v; want the engine's", name, under, ok)
		}
		if _, ok := loom.StoreAs[interface{ NoSuchMethod() }](s); ok {
			t.Errorf("%s: found a method no store has", name)
		}
	}
	if _, ok := loom.StoreAs[loom.Store](nil); ok {
		t.Errorf("no store: found one")
	}
}
