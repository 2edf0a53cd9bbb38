package conformance

import (
	"context"
	"errors"
	"os"
	"strconv"
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
// own syntax) fails only as invalid input. The query is repeated up to
// times, as pasted text repeats itself, and searched beside a message of
// tens of thousands of words: a query longer than loom.ParseQuery takes
// is refused as invalid input, and no search makes the process's
// resident memory exceed fuzzMemory.
func FuzzSearch(f *testing.F, st loom.Store) {
	s := fuzzSession(f, st)
	var long strings.Builder
	words := strings.Fields(`pool size config postgres sqlite the words about and plain english hi said he x`)
	for i := range 40000 {
		long.WriteString(words[i*7%len(words)])
		long.WriteByte(' ')
	}
	if err := st.Append(context.Background(), s, text(loom.RoleAssistant, long.String())); err != nil {
		f.Fatal(err)
	}
	for _, q := range []string{`he said "hi" AND (NEAR* -x`, `"`, `""`, `NEAR(a b, 2)`, `a OR b`, `-x`, `col:val`, "a:b", `*`, `^a`,
		`{a b}`, `"unterminated`, "\x00", "\xff\xfe", `a"b"c"d`, `🙂 ünïcödé`, "日本語 テキスト", `AND AND`, `NOT`, `( )`, `'`, "!!!",
		"the", "&|!", "1.2.3", `"pool size" config`, "pool",
		// What the tiers after every word rewrite: stems, prefixes,
		// typo variants of long and non-ASCII words, stop words only.
		"configurations poolz", "naïve café größe", "Ωmega ΣΙΓΜΑ", "aaaaaaaaaaaaaaaaaaaaaaaa", "the of and which", "pool* size*", "x y z w"} {
		f.Add(q, false, uint16(1))
		f.Add(q, true, uint16(1))
	}
	f.Add("pool size ", false, uint16(100))
	f.Add(`"pool size" `, false, uint16(30))
	f.Add("pool ", false, uint16(3000))
	f.Add("pool ", true, uint16(40))
	f.Add("the words about ", false, uint16(10000))
	f.Fuzz(func(t *testing.T, q string, raw bool, times uint16) {
		if len(q) > 0 {
			q = strings.Repeat(q, min(int(times), maxFuzzQuery/len(q)))
		}
		_, err := st.Search(ctx(t), loom.SearchQuery{Text: q, Raw: raw, UserID: "alice"})
		if peak := peakMemory(); peak > fuzzMemory {
			t.Fatalf("search of %d bytes: resident memory reached %d MB", len(q), peak>>20)
		}
		if errors.Is(err, loom.ErrSearchTime) {
			// A search this store answers in milliseconds can still run
			// out of time on a machine the fuzzer keeps busy.
			t.Logf("search of %d bytes: %v", len(q), err)
			return
		}
		if raw {
			if err != nil && loom.ErrorCode(err) != loom.EINVALID {
				t.Fatalf("raw search %q: %v", q, err)
			}
			return
		}
		// A plain query is never refused, however long.
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
	})
}

// maxFuzzQuery bounds the length of a fuzzed query: well past the
// limit, as long as an agent's pasted prompt.
const maxFuzzQuery = 256 << 10

// fuzzMemory bounds the resident memory of a fuzzing process.
const fuzzMemory = 1 << 30

// peakMemory is the most resident memory this process has had, in bytes
// (Linux; 0 elsewhere).
func peakMemory() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
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
