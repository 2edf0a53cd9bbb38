//go:build unix

package observe

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes f's lock (flock, dropped by the kernel when the process
// ends), waiting for it: an append and a compaction of the same file
// take turns.
func lockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX) }

// sameFile says whether f is still the file at name (a compaction
// replaces it by a rename).
func sameFile(f *os.File, name string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(name)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}
