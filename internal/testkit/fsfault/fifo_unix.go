//go:build unix

package fsfault

import (
	"syscall"
	"testing"
)

// Fifo makes a named pipe at path, mode 0600, or skips the test where
// none can be made.
func Fifo(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
}
