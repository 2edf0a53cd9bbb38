// Package testseed gives a property test its generator: seeded afresh each
// run, the seed printed, and LOOM_TEST_SEED replaying it.
package testseed

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// Seed returns LOOM_TEST_SEED's seed when it is set, else a seed of its
// own, and logs it and how to replay it.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv("LOOM_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("LOOM_TEST_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (LOOM_TEST_SEED=%d replays it)", seed, seed)
	return seed
}

// Rand returns a generator seeded by Seed.
func Rand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := Seed(t)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}
