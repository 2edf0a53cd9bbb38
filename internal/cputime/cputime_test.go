package cputime_test

import (
	"testing"

	"github.com/loomhq/loom/internal/cputime"
)

// Work done shows as CPU time used.
func TestUsedGrows(t *testing.T) {
	before := cputime.Used()
	x := 0
	for i := range 200_000_000 {
		x += i % 7
	}
	if after := cputime.Used(); after <= before || x == 0 {
		t.Errorf("CPU time %v before a busy loop, %v after", before, after)
	}
}
