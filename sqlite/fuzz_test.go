package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
)

func fuzzStore(f *testing.F) *sqlite.Store {
	return storetest.Must(sqlite.Open(context.Background(), filepath.Join(f.TempDir(), "sessions.db")))(f)
}

func FuzzSearchQuery(f *testing.F) { conformance.FuzzSearch(f, fuzzStore(f)) }

func FuzzResolve(f *testing.F) { conformance.FuzzResolve(f, fuzzStore(f)) }
