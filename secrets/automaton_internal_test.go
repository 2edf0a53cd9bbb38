package secrets

import (
	"cmp"
	"flag"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var automatonSeed = flag.Uint64("automaton.seed", 0, "seed of TestAutomatonFindsWhatASearchFinds (0: from the clock)")

// occurrence is one pattern found, as Walk reports it.
type occurrence struct{ end, n, pattern int64 }

// naiveOccurrences is what Walk must report: every occurrence of every
// pattern, by end, the longest first at one end.
func naiveOccurrences(patterns []string, text string) []occurrence {
	var out []occurrence
	for k, p := range patterns {
		for i := 0; i+len(p) <= len(text); i++ {
			if text[i:i+len(p)] == p {
				out = append(out, occurrence{int64(i + len(p) - 1), int64(len(p)), int64(k)})
			}
		}
	}
	slices.SortFunc(out, func(a, b occurrence) int {
		return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(b.n, a.n))
	})
	return out
}

// Property: over random sets of patterns (short words of a small
// alphabet, so that they share prefixes and suffixes and overlap) and
// random texts, the automaton reports exactly the occurrences a search
// for each pattern finds, in Walk's order. Replay with
// -automaton.seed=N.
func TestAutomatonFindsWhatASearchFinds(t *testing.T) {
	seed := *automatonSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: go test ./secrets -run TestAutomatonFindsWhatASearchFinds -automaton.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	for round := range 500 {
		alphabet := "abc"[:1+rng.IntN(3)] + "\x00\xff-_"[:rng.IntN(5)]
		word := func(most int) string {
			var b strings.Builder
			for range 1 + rng.IntN(most) {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
			return b.String()
		}
		var patterns []string
		for range 1 + rng.IntN(12) {
			if w := word(6); !slices.Contains(patterns, w) {
				patterns = append(patterns, w)
			}
		}
		text := word(80) + "xyz" + word(80)
		a := newAutomaton(patterns)
		var got []occurrence
		a.Walk([]byte(text), func(end, n, pattern int64) bool {
			got = append(got, occurrence{end, n, pattern})
			return true
		})
		if want := naiveOccurrences(patterns, text); !slices.Equal(got, want) {
			t.Fatalf("round %d: patterns %q in %q:\n got %v\nwant %v", round, patterns, text, got, want)
		}
	}
}

// Walk stops where its function says so.
func TestAutomatonWalkStops(t *testing.T) {
	a := newAutomaton([]string{"ab", "b"})
	var n int
	a.Walk([]byte("ababab"), func(end, _, _ int64) bool { n++; return n < 3 })
	if n != 3 {
		t.Fatalf("Walk called its function %d times after it returned false at the third, want 3", n)
	}
}

// Patterns may hold every byte: one column each, and one for none.
func TestAutomatonEveryByte(t *testing.T) {
	var patterns []string
	var text []byte
	for c := range 256 {
		patterns = append(patterns, string([]byte{byte(c)}))
		text = append(text, byte(255-c))
	}
	patterns = append(patterns, "\xfe\xfd")
	var got []occurrence
	newAutomaton(patterns).Walk(text, func(end, n, pattern int64) bool {
		got = append(got, occurrence{end, n, pattern})
		return true
	})
	if want := naiveOccurrences(patterns, string(text)); !slices.Equal(got, want) {
		t.Fatalf("every byte:\n got %v\nwant %v", got, want)
	}
}
