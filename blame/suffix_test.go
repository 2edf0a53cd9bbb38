package blame

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTrackedSuffixAsSplit: the end of a path naming a tracked file, and
// the root before it, are those of the path split at its slashes and
// joined again (what matching other machines' roots did), over random
// paths with empty, repeated and leading slashes. Seeded;
// LOOM_SUFFIX_SEED replays.
func TestTrackedSuffixAsSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t, "LOOM_SUFFIX_SEED"), 3))
	words := []string{"a", "b", "src", "", "x.go", "a/b", "b/x.go"}
	split := func(path string, tracked map[string]bool) (string, bool) {
		parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for k := range parts {
			if tracked[strings.Join(parts[k:], "/")] {
				return "/" + strings.Join(parts[:k], "/"), true
			}
		}
		return "", false
	}
	for range 20000 {
		tracked := map[string]bool{}
		for range r.IntN(4) {
			tracked[words[r.IntN(len(words))]+"/"+words[r.IntN(len(words))]] = true
			tracked[words[r.IntN(len(words))]] = true
		}
		var b strings.Builder
		for range r.IntN(6) {
			if r.IntN(2) == 0 {
				b.WriteString("/")
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		path := b.String()
		root, ok := trackedSuffix(path, tracked)
		wroot, wok := split(path, tracked)
		if root != wroot || ok != wok {
			t.Fatalf("%q with %v: %q %v, split gives %q %v", path, tracked, root, ok, wroot, wok)
		}
	}
}
