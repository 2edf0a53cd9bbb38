package command_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
)

// openStore opens a fresh SQLite store in a temporary directory.
func openStore(t *testing.T) loom.Engine {
	t.Helper()
	return storetest.Must(sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sessions.db")))(t)
}

// addSession stores s with one user message saying text.
func addSession(t *testing.T, st loom.Store, s *loom.Session, text string) *loom.Session {
	t.Helper()
	if s.UserID == "" {
		s.UserID = "local"
	}
	m := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
	if err := st.Append(context.Background(), s, m); err != nil {
		t.Fatal(err)
	}
	return s
}
