//go:build !unix

package fsfault

import "testing"

// Fifo skips the test: this system has no named pipes in its file
// system.
func Fifo(t testing.TB, path string) {
	t.Helper()
	t.Skipf("no named pipes here (%s)", path)
}
