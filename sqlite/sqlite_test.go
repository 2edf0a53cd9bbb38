package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/sqlite"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Opener {
		path := filepath.Join(t.TempDir(), "sessions.db")
		return func(t *testing.T) loom.Store {
			st, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
	})
}

func openStore(path string) (loom.Store, error) {
	return sqlite.Open(context.Background(), path)
}
