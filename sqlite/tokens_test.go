package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/sqlite"
)

func TestTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	conformance.RunTokens(t, func(t *testing.T) loom.TokenStore {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}
