package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// fuzzSession fills st with the session the fuzz tests search and
// resolve: messages that hold query syntax as text.
func fuzzSession(f *testing.F, st loom.Store) *loom.Session {
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:fuzz", Title: "Fuzz Title"}
	if err := st.Append(context.Background(), s,
		text(loom.RoleUser, `he said "hi" AND (NEAR* -x`),
		text(loom.RoleAssistant, "plain english words about postgres and sqlite; config.toml and the pool_size of 1.2.3")); err != nil {
		f.Fatal(err)
	}
	return s
}

// FuzzSearch fills st, an empty store, and checks that whatever a user
// types, a search returns without error, and a raw query (the engine's
// own syntax) fails only as invalid input.
func FuzzSearch(f *testing.F, st loom.Store) {
	fuzzSession(f, st)
	for _, q := range []string{`he said "hi" AND (NEAR* -x`, `"`, `""`, `NEAR(a b, 2)`, `a OR b`, `-x`, `col:val`, "a:b", `*`, `^a`,
		`{a b}`, `"unterminated`, "\x00", "\xff\xfe", `a"b"c"d`, `🙂 ünïcödé`, "日本語 テキスト", `AND AND`, `NOT`, `( )`, `'`, "!!!",
		"the", "&|!", "1.2.3", `"pool size" config`, "pool"} {
		f.Add(q, false)
		f.Add(q, true)
	}
	f.Fuzz(func(t *testing.T, q string, raw bool) {
		_, err := st.Search(ctx(t), loom.SearchQuery{Text: q, Raw: raw, UserID: "alice"})
		if raw {
			if err != nil && loom.ErrorCode(err) != loom.EINVALID {
				t.Fatalf("raw search %q: %v", q, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
	})
}

// FuzzResolve fills st, an empty store, and checks that any reference
// either resolves to the one session or fails with a coded not-found,
// ambiguous or invalid error; never an internal error, also for text a
// database cannot hold.
func FuzzResolve(f *testing.F, st loom.Store) {
	s := fuzzSession(f, st)
	for _, seed := range []string{s.ID, s.ID[:4], s.ID[:8], strings.ToUpper(s.ID[:10]), "cli:fuzz", "fuzz title", "", " ", "%", "_",
		"0000", "~", "'; DROP TABLE sessions; --", "\x00", "\xff", "FUZZ TİTLE"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		got, err := st.Resolve(ctx(t), ref, loom.ResolveScope{UserID: "alice"})
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
