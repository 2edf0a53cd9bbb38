// Package seedtest gives a generated test its seed, and says how to
// replay it.
package seedtest

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// Seed is the seed of a generated test: LOOM_TEST_SEED's when it is set,
// else the time's. It is logged, so that a failure can be replayed.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LOOM_TEST_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("LOOM_TEST_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (LOOM_TEST_SEED=%d replays it)", seed, seed)
	return seed
}
