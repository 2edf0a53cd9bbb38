package clitest

import (
	"fmt"
	"testing"
)

// The terminal sizes every chat test of this file runs at: the smallest
// common one and a larger one, so that nothing holds for one height or
// width only.
var termSizes = []struct{ cols, rows int }{{80, 24}, {100, 40}}

func ForTermSizes(t *testing.T, test func(t *testing.T, cols, rows int)) {
	for _, sz := range termSizes {
		t.Run(fmt.Sprintf("%dx%d", sz.cols, sz.rows), func(t *testing.T) {
			t.Parallel()
			test(t, sz.cols, sz.rows)
		})
	}
}
