package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// fuzzStore opens a store holding one session whose messages contain
// query syntax as text.
func fuzzStore(f *testing.F) (*loom.Session, loom.Store) {
	st, err := openStore(filepath.Join(f.TempDir(), "sessions.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:fuzz", Title: "Fuzz Title"}
	if err := st.Append(context.Background(), s,
		msg(`he said "hi" AND (NEAR* -x`), msg("plain english words about postgres and sqlite")); err != nil {
		f.Fatal(err)
	}
	return s, st
}

// FuzzSearchQuery: whatever a user types, search returns without error.
func FuzzSearchQuery(f *testing.F) {
	for _, seed := range []string{`he said "hi" AND (NEAR* -x`, `"`, `NEAR(a b, 2)`, `a OR b`, `-x`, `col:val`, `*`, `^a`, `{a b}`, `"unterminated`, "\x00", `a"b"c"d`, `🙂 ünïcödé`, `AND AND`, `NOT`, `( )`, `'`} {
		f.Add(seed)
	}
	_, st := fuzzStore(f)
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := st.Search(context.Background(), loom.SearchQuery{Text: q, UserID: "alice"}); err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
	})
}

// FuzzResolve: any reference either resolves or fails with a coded
// not-found, ambiguous or invalid error; never an internal error.
func FuzzResolve(f *testing.F) {
	s, st := fuzzStore(f)
	for _, seed := range []string{s.ID, s.ID[:4], s.ID[:8], strings.ToUpper(s.ID[:10]), "cli:fuzz", "fuzz title", "", " ", "%", "_", "0000", "~", "'; DROP TABLE sessions; --", "\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		got, err := st.Resolve(context.Background(), ref, loom.ResolveScope{UserID: "alice"})
		switch loom.ErrorCode(err) {
		case "":
			if got.ID != s.ID {
				t.Fatalf("resolve %q found %s", ref, got.ID)
			}
		case loom.ENOTFOUND, loom.EAMBIGUOUS, loom.EINVALID:
		default:
			t.Fatalf("resolve %q: %v", ref, err)
		}
	})
}
